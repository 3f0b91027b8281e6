// Writing answers: JSON bodies with their headers, and errors in the caller format's envelope.
import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { FormatName } from '../ir.ts';
import { GatewayError } from '../errors.ts';
import { CODECS } from '../formats/index.ts';
import type { Headers } from '../headers.ts';

export type { Headers };

export function sendJson(res: ServerResponse, status: number, body: string, headers: Headers = {}): void {
  if (res.headersSent) { res.end(); return; }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** The gateway's own endpoints (admin, usage, limits, models, unknown paths) answer errors in
 *  OpenAI's envelope, the one most clients parse. */
const PLAIN: FormatName = 'responses';

/** An error's body in the envelope of `format` (its codec writes it). */
export const errorBody = (format: FormatName | 'plain', err: GatewayError): Record<string, unknown> =>
  CODECS[format === 'plain' ? PLAIN : format].errorBody(err);

/** The longest Retry-After a client's SDK is left to wait out by retrying (the OpenAI SDK's own
 *  bound for honouring it). */
const MAX_CLIENT_WAIT_S = 60;

export function sendError(res: ServerResponse, format: FormatName | 'plain', err: GatewayError, headers: Headers = {}): void {
  const withRetry: Headers = { ...headers };
  if (err.retryAfterS !== undefined) {
    withRetry['retry-after'] = err.retryAfterS;
    // A wait no request should sleep through (a daily ceiling until midnight, a provider's hour):
    // the OpenAI and Anthropic SDKs then raise at once instead of retrying; the Anthropic SDK
    // would otherwise sleep the whole Retry-After, hours, before each retry.
    if (err.retryAfterS > MAX_CLIENT_WAIT_S) withRetry['x-should-retry'] = 'false';
  }
  // A body refused before it was read whole (too large, too slow) leaves its rest on the socket:
  // the connection closes after the answer, on every endpoint, instead of idling to keep-alive's end.
  // (A body never read at all closes its connection too: lib/http/server.ts GatewayResponse.)
  if (err.code === 'request_too_large' || err.code === 'request_timeout') withRetry.connection = 'close';
  // A draining gateway: the client comes back in a second, on a new connection (to another instance).
  else if (err.code === 'shutting_down') withRetry['retry-after'] ??= 1;
  // The one coding a body may have; the refusal says so (RFC 9110 §15.5.16).
  else if (err.code === 'unsupported_content_encoding') withRetry['accept-encoding'] = 'identity';
  if (format === 'messages') withRequestId(res, withRetry);
  sendJson(res, err.status, JSON.stringify(errorBody(format, err)), withRetry);
}

/** The Anthropic SDKs read a request's id from `request-id` only (an error's requestID, a
 *  message's _request_id): a Messages answer carries it equal to x-request-id, which every other
 *  client reads. An answer that has no id yet (count_tokens, a 405) gets one. */
function withRequestId(res: ServerResponse, headers: Headers): void {
  if (headers['request-id'] !== undefined || res.hasHeader('request-id')) return;
  const id = headers['x-request-id'] ?? res.getHeader('x-request-id') ?? randomUUID();
  headers['x-request-id'] = id as string;
  headers['request-id'] = id as string;
}

/** Gives an answer a fresh id under both names, before it is written (an endpoint of the Messages
 *  format without a request id of its own: count_tokens); an error sent after keeps it. */
export function setRequestId(res: ServerResponse, id: string = randomUUID()): string {
  res.setHeader('x-request-id', id);
  res.setHeader('request-id', id);
  return id;
}

/** Any thrown value as a GatewayError (unknown ones become internal_error, logged by the caller). */
export const asGatewayError = (err: unknown): GatewayError =>
  err instanceof GatewayError ? err : new GatewayError('internal_error');

/** What an answered error came from: a store error keeps its cause (the store's own error), which
 *  tells a damaged file from a passing failure (Store.observe). */
export const causeOf = (err: unknown): unknown => (err as { cause?: unknown } | null)?.cause ?? err;
