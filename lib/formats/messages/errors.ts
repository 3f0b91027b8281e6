// Errors in the Messages format: Anthropic's envelope (error.type by status, the spec's code string
// beside it), and the error event a broken stream ends with.
import type { GatewayError } from '../../errors.ts';
import { formatFrame } from '../../sse.ts';

const anthropicType = (status: number): string =>
  status === 401 ? 'authentication_error'
    : status === 402 ? 'billing_error'
    : status === 403 ? 'permission_error'
    : status === 404 ? 'not_found_error'
    : status === 413 ? 'request_too_large'
    : status === 429 ? 'rate_limit_error'
    : status === 529 ? 'overloaded_error'
    : status >= 500 ? 'api_error'
    : 'invalid_request_error';

export const messagesErrorBody = (err: GatewayError): Record<string, unknown> => ({
  type: 'error',
  error: { type: anthropicType(err.status), message: err.message, code: err.code, ...(err.details ? { details: err.details } : {}) },
});

export const messagesErrorFrame = (code: string, message: string): string =>
  formatFrame(JSON.stringify({ type: 'error', error: { type: 'api_error', message, code } }), 'error');
