// Ids of the Interactions encoders.
import { randomString } from '../../random-id.ts';

/** An interaction id the gateway mints for an answer no provider stored: one translated from
 *  another API (vendor A, vendor C) or served by cloud_a (Vertex generateContent stores nothing).
 *  Gemini's own ids begin "v1_"; this prefix never does, so a previous_interaction_id naming such
 *  an id is refused at validation (lib/routing/validate.ts) rather than sent to vendor B, which
 *  would answer an unknown id with a 404. Streamed and non-streamed answers mint the same way. */
export const UNSTORED_INTERACTION_PREFIX = 'gw_unstored_';

export const newUnstoredInteractionId = (): string => UNSTORED_INTERACTION_PREFIX + randomString(18, 'base64url');

export const isUnstoredInteractionId = (id: string): boolean => id.startsWith(UNSTORED_INTERACTION_PREFIX);
