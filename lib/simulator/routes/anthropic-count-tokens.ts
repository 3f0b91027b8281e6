// vendor_c's POST /v1/messages/count_tokens: the body of a Messages request without max_tokens;
// the answer is {input_tokens}, counted as the simulated model counts its prompt (⌈text / 4⌉).
import type { IncomingHttpHeaders } from 'node:http';
import { asString, isRecord } from '../prompt.ts';
import { decodeAnthropic } from './anthropic-shape.ts';
import { bearerToken, headerValue } from './route.ts';
import { errorReply, type ErrorReply } from '../errors.ts';

export const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';

export function countTokens(headers: IncomingHttpHeaders, body: unknown): ErrorReply {
  if (!headerValue(headers, 'x-api-key')?.trim() && !bearerToken(headers)) {
    return errorReply('anthropic', 'unauthenticated', { message: 'x-api-key header is required' });
  }
  if (!headerValue(headers, 'anthropic-version')?.trim()) {
    return errorReply('anthropic', 'bad_request', { message: 'anthropic-version: header is required' });
  }
  if (!isRecord(body)) return errorReply('anthropic', 'bad_request', { message: 'Request body must be a JSON object.' });
  const model = asString(body.model);
  if (!model) return errorReply('anthropic', 'bad_request', { message: 'model: Field required' });
  if (body.max_tokens !== undefined) {
    return errorReply('anthropic', 'bad_request', { message: 'max_tokens: Extra inputs are not permitted' });
  }
  const decoded = decodeAnthropic({ ...body, max_tokens: 1 }, model);
  if (!decoded.ok) return errorReply('anthropic', 'bad_request', { status: decoded.status, message: decoded.message });
  const inputTokens = Math.max(1, Math.ceil(decoded.value.prompt.text.length / 4));
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input_tokens: inputTokens }) };
}
