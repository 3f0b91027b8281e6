// What the two Google formats (Gemini Interactions and Vertex generateContent) share: the error
// envelope, with Google's status names. A codec folder imports no other codec folder.
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
