// vendor_c, Anthropic Messages: POST /v1/messages. Needs an API key and anthropic-version; no flex
// tier (service_tier other than auto/standard_only is a 400); overload is 529 overloaded_error.
// The key is accepted as x-api-key or as `Authorization: Bearer` — the installed official SDK
// (@anthropic-ai/sdk 1.x) sends the key that way.
import { sseEvent, sseRaw, SSE_CONTENT_TYPE } from '../frames.ts';
import { asString, invalid, isRecord } from '../prompt.ts';
import { decodeAnthropic, messageBody, messageEvents } from './anthropic-shape.ts';
import { bearerToken, headerValue, recordedEventName, type RouteAdapter } from './route.ts';

export const anthropicMessages: RouteAdapter = {
  name: 'vendor_c',
  family: 'anthropic',
  match: (path) => (path === '/v1/messages' ? {} : undefined),
  authenticate: (info) => {
    if (!headerValue(info.headers, 'x-api-key')?.trim() && !bearerToken(info.headers)) {
      return { name: 'unauthenticated', message: 'x-api-key header is required' };
    }
    if (!headerValue(info.headers, 'anthropic-version')?.trim()) {
      return { name: 'bad_request', message: 'anthropic-version: header is required' };
    }
    return undefined;
  },
  decode: (body) => {
    if (!isRecord(body)) return invalid('Request body must be a JSON object.');
    const model = asString(body.model);
    if (!model) return invalid('model: Field required');
    return decodeAnthropic(body, model);
  },
  streamContentType: SSE_CONTENT_TYPE,
  encodeBody: (answer) => messageBody(answer),
  encodeStream: (answer) => ({
    frames: (function* () {
      for (const event of messageEvents(answer)) yield sseEvent(event.payload.type as string, event.payload, event.tokens);
    })(),
    error: (message) => [sseEvent('error', { type: 'error', error: { type: 'api_error', message } })],
  }),
  replayFrame: (line) => sseRaw(line, recordedEventName(line, 'type')),
  replayTail: [],
  headers: (answer) => ({ 'request-id': `req_01${answer?.uid ?? 'sim'}` }),
};
