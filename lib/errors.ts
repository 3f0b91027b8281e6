// Every error the gateway answers with, declared once, so a code, its status and its message cannot
// drift apart between the places that raise it. The codes are the keys. Each format's codec wraps the
// same entry in its own envelope (FormatCodec.errorBody) so that format's official SDK raises its
// typed error.

interface ErrorSpec { status: number; message: string }

export const ERRORS = {
  // request shape
  invalid_json: { status: 400, message: 'The request body is not valid JSON.' },
  invalid_request: { status: 400, message: 'The request body does not match the endpoint schema.' },
  request_too_large: { status: 413, message: 'The request body is larger than 50000000 bytes.' },
  unsupported_content_encoding: {
    status: 415, message: 'The request body has a Content-Encoding; send it uncompressed (Accept-Encoding: identity).',
  },
  missing_start_within: { status: 400, message: 'start_within is required (a duration "HHh-MMm-SSs" of at most 10 minutes, or "now").' },
  invalid_start_within: { status: 400, message: 'start_within must be "HHh-MMm-SSs" (two-digit fields) of at most 00h-10m-00s, or "now".' },
  invalid_retry: { status: 400, message: 'retry must be {count: 1..5, backoff: "exponential"|"linear", jitter: boolean}.' },
  invalid_provider_chain: {
    status: 400, message: 'provider must be a non-empty array of distinct routes: vendor_a, vendor_b, vendor_c, cloud_a, cloud_b.',
  },
  provider_model_mismatch: { status: 400, message: 'A route in provider cannot serve this model.' },
  flex_unsupported_on_cloud: {
    status: 400, message: 'A duration start_within cannot race flex on a cloud route; put a direct route first or use "now".',
  },
  flex_unsupported_for_vendor_c: { status: 400, message: 'vendor C models have no flex tier; use start_within "now".' },
  flex_model_not_capable: { status: 400, message: 'This model cannot race the flex tier; use start_within "now".' },
  provider_key_missing: { status: 400, message: 'No key is configured for a route named in provider.' },
  model_not_found: { status: 404, message: 'The model is not in the catalog.' },
  unsupported_parameter: { status: 400, message: 'A parameter is not supported by the target provider.' },
  unsupported_generation_config: { status: 400, message: 'A generation_config key is not supported on this model.' },
  service_tier_not_allowed: { status: 400, message: 'service_tier is not accepted; the tier follows from start_within.' },
  unsupported_value: { status: 400, message: 'A parameter value is not supported.' },
  beta_not_supported: { status: 400, message: 'Experimental beta headers and fields are not forwarded.' },
  conversation_state_unroutable: { status: 400, message: 'The request refers to conversation state held by a route it cannot run on.' },
  // authentication and limits
  missing_api_key: { status: 401, message: 'Send the API key as Authorization: Bearer <key>; x-api-key is not read.' },
  invalid_api_key: { status: 401, message: 'The API key is missing, wrong or revoked.' },
  account_under_review: { status: 403, message: 'Managed serving is paused while the account is under review.' },
  insufficient_balance: { status: 402, message: 'The managed balance is at or below zero; add money to resume.' },
  spend_velocity_exceeded: { status: 429, message: 'The daily spend ceiling is passed; managed serving resumes at the next UTC midnight.' },
  rate_limit_exceeded: { status: 429, message: 'Too many requests; back off for the seconds in Retry-After.' },
  limits_unavailable: { status: 503, message: 'The limits record cannot be read right now.' },
  upstream_capacity_exceeded: {
    status: 503,
    message: 'Every upstream connection of the route is taken and its wait queue is full or timed out; retry after Retry-After.',
  },
  request_timeout: { status: 408, message: 'The request headers or body did not arrive in time.' },
  store_unavailable: { status: 503, message: 'The key store cannot be read right now; retry shortly.' },
  provider_key_unreadable: {
    status: 500, message: "This organization's stored provider key cannot be decrypted with the gateway's GATEWAY_SECRET_KEY; the operator must restore that secret or set the key again.",
  },
  // upstream and lifecycle
  provider_error: { status: 502, message: 'The provider failed and no retry or fallback was left.' },
  provider_rejected: { status: 400, message: 'The provider rejected the request.' },
  deadline_exceeded: { status: 504, message: 'No tier could start the request.' },
  client_closed_request: { status: 499, message: 'The client closed the request before a result.' },
  shutting_down: { status: 503, message: 'The gateway is shutting down.' },
  internal_error: { status: 500, message: 'Internal error.' },
  // plumbing
  not_found: { status: 404, message: 'No such endpoint.' },
  method_not_allowed: { status: 405, message: 'Method not allowed.' },
  admin_unauthorized: { status: 401, message: 'The admin token is missing or wrong.' },
  org_not_found: { status: 404, message: 'No such organization.' },
  key_not_found: { status: 404, message: 'No such key.' },
  // usage and management API (docs/usage.md)
  insufficient_scope: { status: 403, message: 'This API key cannot manage the organization; use a key with the manage scope.' },
  invalid_time_range: { status: 400, message: 'from and to must be epoch seconds or ISO 8601 dates, with from before to.' },
  invalid_group_by: { status: 400, message: 'group_by must be a comma-separated list of distinct dimensions.' },
  invalid_filter: { status: 400, message: 'A filter or query parameter is not valid.' },
  invalid_limit: { status: 400, message: 'limit must be an integer from 1 to 200.' },
  invalid_cursor: { status: 400, message: 'cursor is not a cursor returned by this endpoint.' },
  idempotency_key_reused: { status: 409, message: 'This Idempotency-Key was already used for a top-up of other amounts; nothing was credited.' },
  secret_mismatch: {
    status: 409, message: 'Another running gateway process seals provider keys with a different GATEWAY_SECRET_KEY; nothing was resealed.',
  },
} satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param?: string;
  readonly retryAfterS?: number;
  /** A machine-readable refinement a client SDK acts on (Messages `error.details`). */
  readonly details?: Record<string, unknown>;
  constructor(
    code: ErrorCode, message?: string,
    opts: { param?: string; retryAfterS?: number; status?: number; details?: Record<string, unknown> } = {},
  ) {
    super(message ?? ERRORS[code].message);
    this.code = code;
    this.status = opts.status ?? ERRORS[code].status;
    this.param = opts.param;
    this.retryAfterS = opts.retryAfterS;
    this.details = opts.details;
  }
}
