// Ids of the Interactions encoders.
import { randomString } from '../../random-id.ts';

export const newInteractionId = (): string => `v1_${randomString(18, 'base64url')}`;
