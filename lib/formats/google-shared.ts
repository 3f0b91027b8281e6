// What the two Google formats (Gemini Interactions and Vertex generateContent) share: the error
// envelope, with Google's status names, and the signature for calls Gemini did not sign. A codec
// folder imports no other codec folder.
import type { GatewayError } from '../errors.ts';

const googleStatus = (status: number): string =>
  status === 401 ? 'UNAUTHENTICATED'
    : status === 403 ? 'PERMISSION_DENIED'
    : status === 402 ? 'FAILED_PRECONDITION'
    : status === 404 ? 'NOT_FOUND'
    : status === 413 ? 'INVALID_ARGUMENT'
    : status === 429 ? 'RESOURCE_EXHAUSTED'
    : status === 499 ? 'CANCELLED'
    : status === 503 ? 'UNAVAILABLE'
    : status === 504 ? 'DEADLINE_EXCEEDED'
    : status >= 500 ? 'INTERNAL'
    : 'INVALID_ARGUMENT';

/** Google's error envelope; error.code is the spec's code string, as js-genai types the
 *  Interactions error, beside error.status. */
export const googleErrorBody = (err: GatewayError): Record<string, unknown> =>
  ({ error: { code: err.code, message: err.message, status: googleStatus(err.status) } });

/** The thought signature Google documents for a function call Gemini did not sign itself: history
 *  from another model or from a caller whose format cannot keep signatures (Chat, Responses).
 *  Gemini 3 refuses a step whose first function call has no signature (400 "… missing a
 *  thought_signature"); this value tells its validator to skip the check. */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';
