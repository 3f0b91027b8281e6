// Ids for Vertex traffic, which names neither responses nor (usually) function calls.
import { randomString } from '../../random-id.ts';

export const newCallId = (): string => `call_${randomString(9, 'base64url')}`;
export const newResponseId = (): string => randomString(16, 'base64url');
