// What the two OpenAI formats (Responses and Chat Completions) share: ids, data URLs, the tier
// names, native fields laid over an encoded body, and the error envelope. A codec folder imports
// no other codec folder, so what two of them share lives here.
import { randomString } from '../random-id.ts';
import type { Tier } from '../routes.ts';
import type { GatewayError } from '../errors.ts';
import { isPlainObject } from '../json-util.ts';

export const newId = (prefix: string): string => prefix + randomString(24, 'hex');

/** Splits `data:<media>;base64,<data>` into its parts; undefined for anything else. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]*)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1] || 'application/octet-stream', data: match[2] } : undefined;
}

export const dataUrl = (mediaType: string | undefined, data: string): string =>
  `data:${mediaType ?? 'application/octet-stream'};base64,${data}`;

/** The tier OpenAI reports as served: "flex" is flex; default, scale, priority… are standard. */
export const tierFromServiceTier = (t: unknown): Tier => (t === 'flex' ? 'flex' : 'standard');
export const serviceTierOf = (t: Tier): 'flex' | 'default' => (t === 'flex' ? 'flex' : 'default');

// Fields only the caller's own OpenAI family understands travel in IRRequest.native; a same-family
// encoder lays them over the body it built. Arrays (hosted tools beside function tools) are
// appended and objects (text.verbosity beside text.format) merged, so a native field adds to what
// the IR said instead of replacing it.
export function mergeNative(body: Record<string, any>, fields: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(fields)) {
    const have = body[key];
    if (Array.isArray(have) && Array.isArray(value)) body[key] = [...have, ...value];
    else if (isPlainObject(have) && isPlainObject(value)) body[key] = { ...have, ...value };
    else body[key] = value;
  }
}

const openaiType = (status: number): string =>
  status === 401 ? 'authentication_error'
    : status === 403 ? 'permission_error'
    : status === 402 ? 'insufficient_quota'
    : status === 404 ? 'not_found_error'
    : status === 429 ? 'rate_limit_error'
    : status >= 500 ? 'server_error'
    : 'invalid_request_error';

/** OpenAI's error envelope, the spec's code string in error.code (the SDKs expose it there). */
export const openaiErrorBody = (err: GatewayError): Record<string, unknown> =>
  ({ error: { message: err.message, type: openaiType(err.status), param: err.param ?? null, code: err.code } });
