// Ids of the Interactions encoders.
import { randomBytes } from 'node:crypto';

export const newInteractionId = (): string => `v1_${randomBytes(18).toString('base64url')}`;
