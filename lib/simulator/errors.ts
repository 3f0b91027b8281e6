// Every error the simulator sends, declared once: a name with its default status and message,
// and per provider family the wire envelope and the family's own type/code for that name.
// Injected failures (`fail: [429, 503]`) map a bare status to a name with `errorNameFor`.

export type ErrorFamily = 'openai' | 'anthropic' | 'google' | 'aws';

export type ErrorName =
  | 'bad_request' | 'unauthenticated' | 'forbidden' | 'not_found' | 'method_not_allowed'
  | 'too_large' | 'timeout' | 'rate_limited' | 'server_error' | 'unavailable' | 'overloaded'
  | 'flex_capacity';

const DEFAULTS: Record<ErrorName, { status: number; message: string }> = {
  bad_request: { status: 400, message: 'Invalid request.' },
  unauthenticated: { status: 401, message: 'Missing or invalid credentials.' },
  forbidden: { status: 403, message: 'Permission denied.' },
  not_found: { status: 404, message: 'Not found.' },
  method_not_allowed: { status: 405, message: 'Method not allowed.' },
  too_large: { status: 413, message: 'Request body too large.' },
  timeout: { status: 408, message: 'Request timed out.' },
  rate_limited: { status: 429, message: 'Rate limit reached for requests. Please try again later.' },
  server_error: { status: 500, message: 'The server had an error while processing your request.' },
  unavailable: { status: 503, message: 'The service is temporarily unavailable. Please try again later.' },
  overloaded: { status: 529, message: 'Overloaded' },
  flex_capacity: { status: 429, message: 'Resource Unavailable: flex capacity is temporarily exhausted. Please retry later.' },
};

/** Per family: the wire type (OpenAI type+code, Anthropic type, Google status, AWS exception). */
const OPENAI: Record<ErrorName, [type: string, code: string | null]> = {
  bad_request: ['invalid_request_error', null],
  unauthenticated: ['invalid_request_error', 'invalid_api_key'],
  forbidden: ['invalid_request_error', 'unsupported_country_region_territory'],
  not_found: ['invalid_request_error', 'not_found'],
  method_not_allowed: ['invalid_request_error', null],
  too_large: ['invalid_request_error', 'request_too_large'],
  timeout: ['timeout', 'timeout'],
  rate_limited: ['requests', 'rate_limit_exceeded'],
  server_error: ['server_error', 'server_error'],
  unavailable: ['service_unavailable_error', 'server_is_overloaded'],
  overloaded: ['service_unavailable_error', 'server_is_overloaded'],
  flex_capacity: ['resource_unavailable', 'resource_unavailable'],
};
const ANTHROPIC: Record<ErrorName, string> = {
  bad_request: 'invalid_request_error', unauthenticated: 'authentication_error',
  forbidden: 'permission_error', not_found: 'not_found_error',
  method_not_allowed: 'invalid_request_error', too_large: 'request_too_large',
  timeout: 'timeout_error', rate_limited: 'rate_limit_error', server_error: 'api_error',
  unavailable: 'api_error', overloaded: 'overloaded_error', flex_capacity: 'overloaded_error',
};
const GOOGLE: Record<ErrorName, string> = {
  bad_request: 'INVALID_ARGUMENT', unauthenticated: 'UNAUTHENTICATED', forbidden: 'PERMISSION_DENIED',
  not_found: 'NOT_FOUND', method_not_allowed: 'UNIMPLEMENTED', too_large: 'INVALID_ARGUMENT',
  timeout: 'DEADLINE_EXCEEDED', rate_limited: 'RESOURCE_EXHAUSTED', server_error: 'INTERNAL',
  unavailable: 'UNAVAILABLE', overloaded: 'UNAVAILABLE', flex_capacity: 'UNAVAILABLE',
};
const AWS: Record<ErrorName, string> = {
  bad_request: 'ValidationException', unauthenticated: 'UnrecognizedClientException',
  forbidden: 'AccessDeniedException', not_found: 'ResourceNotFoundException',
  method_not_allowed: 'ValidationException', too_large: 'ValidationException',
  timeout: 'ModelTimeoutException', rate_limited: 'ThrottlingException',
  server_error: 'InternalServerException', unavailable: 'ServiceUnavailableException',
  overloaded: 'ServiceUnavailableException', flex_capacity: 'ServiceUnavailableException',
};

export interface ErrorReply { status: number; headers: Record<string, string>; body: string }

export interface ErrorOptions { status?: number; message?: string; retryAfterS?: number }

export function errorReply(family: ErrorFamily, name: ErrorName, opts: ErrorOptions = {}): ErrorReply {
  const status = opts.status ?? DEFAULTS[name].status;
  const message = opts.message ?? DEFAULTS[name].message;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.retryAfterS !== undefined) headers['retry-after'] = String(opts.retryAfterS);
  let body: unknown;
  switch (family) {
    case 'openai': {
      const [type, code] = OPENAI[name];
      body = { error: { message, type, param: null, code } };
      break;
    }
    case 'anthropic':
      body = { type: 'error', error: { type: ANTHROPIC[name], message }, request_id: requestId() };
      break;
    case 'google': {
      const error: Record<string, unknown> = { code: status, message, status: GOOGLE[name] };
      if (opts.retryAfterS !== undefined) {
        error.details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${opts.retryAfterS}s` }];
      }
      body = { error };
      break;
    }
    case 'aws':
      headers['x-amzn-errortype'] = AWS[name];
      headers['x-amzn-requestid'] = requestId();
      body = { message };
      break;
  }
  return { status, headers, body: JSON.stringify(body) };
}

/** The error name an injected bare status stands for. */
export function errorNameFor(status: number): ErrorName {
  switch (status) {
    case 400: return 'bad_request';
    case 401: return 'unauthenticated';
    case 403: return 'forbidden';
    case 404: return 'not_found';
    case 408: case 504: return 'timeout';
    case 413: return 'too_large';
    case 429: return 'rate_limited';
    case 503: return 'unavailable';
    case 529: return 'overloaded';
    default: return status >= 500 ? 'server_error' : 'bad_request';
  }
}

let requestCounter = 0;
function requestId(): string {
  return `req_sim${(++requestCounter).toString(36).padStart(8, '0')}`;
}
