// Writing answers: JSON bodies with their headers, and errors in the caller format's envelope.
import type { ServerResponse } from 'node:http';
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

export function sendError(res: ServerResponse, format: FormatName | 'plain', err: GatewayError, headers: Headers = {}): void {
  const withRetry: Headers = { ...headers };
  if (err.retryAfterS !== undefined) withRetry['retry-after'] = err.retryAfterS;
  // A body refused before it was read whole (too large, too slow) leaves its rest on the socket:
  // the connection closes after the answer, on every endpoint, instead of idling to keep-alive's end.
  if (err.code === 'request_too_large' || err.code === 'request_timeout') withRetry.connection = 'close';
  sendJson(res, err.status, JSON.stringify(errorBody(format, err)), withRetry);
}

/** Any thrown value as a GatewayError (unknown ones become internal_error, logged by the caller). */
export const asGatewayError = (err: unknown): GatewayError =>
  err instanceof GatewayError ? err : new GatewayError('internal_error');
