// The codec table (lib/formats/index.ts): every format's codec writes its own error envelope and
// in-stream error event; the caller formats' codecs have an endpoint each, at distinct paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CALLER_CODECS, CODECS } from '../../lib/formats/index.ts';
import { GatewayError } from '../../lib/errors.ts';
import { parseFrame } from '../../lib/sse.ts';

const MSG = 'The provider stream failed: boom';

test('each codec ends a broken stream with its own error event, with the message (and the code where the format has a field)', () => {
  const frame = (text: string) => parseFrame(text.trimEnd());
  const frames = Object.fromEntries(Object.values(CODECS).map((c) => [c.name, frame(c.errorFrame('provider_error', MSG))]));
  assert.deepEqual(frames.responses, { event: 'error', data: JSON.stringify({
    type: 'error', code: 'provider_error', message: MSG, param: null,
    error: { type: 'server_error', code: 'provider_error', message: MSG, param: null },
  }) });
  const data = (v: unknown): string => JSON.stringify(v);
  assert.deepEqual(frames.chat, { data: data({ error: { message: MSG, type: 'server_error', param: null, code: 'provider_error' } }) });
  const messages = { type: 'error', error: { type: 'api_error', message: MSG, code: 'provider_error' } };
  assert.deepEqual(frames.messages, { event: 'error', data: data(messages) });
  const interactions = { error: { code: 'provider_error', message: MSG }, event_type: 'error' };
  assert.deepEqual(frames.interactions, { event: 'error', data: data(interactions) });
  assert.deepEqual(frames.vertex, { data: JSON.stringify({ error: { code: 500, message: MSG, status: 'INTERNAL' } }) });
  for (const c of Object.values(CODECS)) assert.ok(c.errorFrame('x', 'y').endsWith('\n\n'), `${c.name}: a whole frame`);
});

test('each codec writes its error envelope: OpenAI (Responses, Chat), Anthropic (Messages), Google (Interactions, Vertex)', () => {
  const err = new GatewayError('rate_limit_exceeded', undefined, { param: 'x' });
  const message = err.message;
  const openai = { error: { message, type: 'rate_limit_error', param: 'x', code: 'rate_limit_exceeded' } };
  const google = { error: { code: 'rate_limit_exceeded', message, status: 'RESOURCE_EXHAUSTED' } };
  assert.deepEqual(CODECS.responses.errorBody(err), openai);
  assert.deepEqual(CODECS.chat.errorBody(err), openai);
  const anthropic = { type: 'error', error: { type: 'rate_limit_error', message, code: 'rate_limit_exceeded' } };
  assert.deepEqual(CODECS.messages.errorBody(err), anthropic);
  assert.deepEqual(CODECS.interactions.errorBody(err), google);
  assert.deepEqual(CODECS.vertex.errorBody(err), google);
});

test('the caller formats are the codecs with an endpoint, each at its own path; Vertex is a provider wire only', () => {
  assert.deepEqual(Object.keys(CALLER_CODECS).sort(), ['chat', 'interactions', 'messages', 'responses']);
  assert.equal(CODECS.vertex.endpoint, undefined);
  const paths = Object.values(CALLER_CODECS).map((c) => c.endpoint.path);
  assert.deepEqual(paths.sort(), ['/v1/chat/completions', '/v1/interactions', '/v1/messages', '/v1/responses']);
});

test('only Chat drops a usage-only frame for a caller that did not ask for usage, and only the choices:[] chunk', () => {
  const drop = CODECS.chat.endpoint.usageOnlyFrame!;
  assert.equal(drop({ choices: [], usage: { prompt_tokens: 1 } }), true);
  assert.equal(drop({ choices: [{ index: 0, delta: {} }], usage: { prompt_tokens: 1 } }), false);
  assert.equal(drop({ usage: {} }), false);
  for (const f of ['responses', 'messages', 'interactions'] as const) assert.equal(CALLER_CODECS[f].endpoint.usageOnlyFrame, undefined, f);
});
