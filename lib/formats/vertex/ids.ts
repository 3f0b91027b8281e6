// Ids for Vertex traffic, which names neither responses nor (usually) function calls.
import { randomBytes } from 'node:crypto';

export const newCallId = (): string => `call_${randomBytes(9).toString('base64url')}`;
export const newResponseId = (): string => randomBytes(16).toString('base64url');
