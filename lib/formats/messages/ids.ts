// Ids of the Messages encoders.
import { randomBytes } from 'node:crypto';

export const newMessageId = (): string => `msg_${randomBytes(12).toString('hex')}`;
