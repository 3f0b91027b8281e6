// Ids of the Messages encoders.
import { randomString } from '../../random-id.ts';

export const newMessageId = (): string => `msg_${randomString(12, 'hex')}`;
