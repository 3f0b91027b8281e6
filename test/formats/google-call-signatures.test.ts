// Gemini 3 refuses a model step whose first function call has no thought signature. A call
// replayed by a Chat or Responses caller (their formats have no field for it) gets Google's
// documented skip value on the way to Vertex and to Interactions; a call that kept Gemini's own
// signature keeps it; parallel calls after the first stay unsigned, as Gemini sends them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { vertexCodec } from '../../lib/formats/vertex/index.ts';
import { interactionsCodec } from '../../lib/formats/interactions/index.ts';
import { decodeChatRequest } from '../../lib/formats/chat/request-decode.ts';
import { decodeResponsesRequest } from '../../lib/formats/responses/request-decode.ts';
import { SKIP_SIGNATURE } from '../../lib/formats/google-shared.ts';
import { type IRRequest, zeroUsage } from '../../lib/ir.ts';

const MODEL = 'gemini-3.5-flash';

const chatHistory = (): IRRequest => decodeChatRequest({ model: MODEL, messages: [
  { role: 'user', content: 'Weather in Paris and Rome?' },
  { role: 'assistant', content: null, tool_calls: [
    { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
  ] },
  { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
  { role: 'tool', tool_call_id: 'call_2', content: 'rain' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
  { role: 'tool', tool_call_id: 'call_3', content: 'noon' },
] });

const responsesHistory = (): IRRequest => decodeResponsesRequest({ model: MODEL, input: [
  { role: 'user', content: 'Weather in Paris?' },
  { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
  { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
] });

/** Gemini's own history, as a Messages or Interactions caller keeps it: signed first call, an
 *  unsigned parallel call after it, then a step signed through a thought before its call. */
const signedHistory = (): IRRequest => ({
  model: MODEL, stream: false,
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
    { role: 'assistant', content: [
      { type: 'tool_call', id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}', signature: 'REAL-1' },
      { type: 'tool_call', id: 'c2', name: 'get_weather', arguments: '{"city":"Rome"}' },
    ] },
    { role: 'user', content: [{ type: 'tool_result', callId: 'c1', content: 'sunny' }, { type: 'tool_result', callId: 'c2', content: 'rain' }] },
    { role: 'assistant', content: [{ type: 'reasoning', signature: 'REAL-2' }, { type: 'tool_call', id: 'c3', name: 'get_time', arguments: '{}' }] },
    { role: 'user', content: [{ type: 'tool_result', callId: 'c3', content: 'noon' }] },
  ],
});

const vertexCalls = (body: Record<string, any>) => body.contents.filter((c: any) => c.role === 'model')
  .map((c: any) => c.parts.filter((p: any) => p.functionCall).map((p: any) => [p.functionCall.name, p.thoughtSignature]));

const interactionsCalls = (body: Record<string, any>) => body.input.filter((s: any) => s.type === 'function_call')
  .map((s: any) => [s.id, s.signature]);

test('the skip value is the one Google documents', () => {
  assert.equal(SKIP_SIGNATURE, 'skip_thought_signature_validator');
});

test('Vertex: a Chat caller\'s replayed calls get the skip value on the first call of each model step only', () => {
  assert.deepEqual(vertexCalls(vertexCodec.encodeRequest(chatHistory())), [
    [['get_weather', SKIP_SIGNATURE], ['get_weather', undefined]],
    [['get_time', SKIP_SIGNATURE]],
  ]);
});

test('Vertex: a Responses caller\'s replayed call gets the skip value', () => {
  assert.deepEqual(vertexCalls(vertexCodec.encodeRequest(responsesHistory())), [[['get_weather', SKIP_SIGNATURE]]]);
});

test('Vertex: Gemini\'s own signatures are kept, on the call and through an empty thought before it; no skip value added', () => {
  const body = vertexCodec.encodeRequest(signedHistory());
  assert.deepEqual(vertexCalls(body), [
    [['get_weather', 'REAL-1'], ['get_weather', undefined]],
    [['get_time', 'REAL-2']],
  ]);
  assert.equal(JSON.stringify(body).includes(SKIP_SIGNATURE), false);
});

test('Vertex: an unsigned call after a signed text part of the same step still gets the skip value', () => {
  // a signature that went to a text part does not sign the call Gemini validates
  const body = vertexCodec.encodeRequest({ model: MODEL, stream: false, messages: [
    { role: 'user', content: [{ type: 'text', text: 'Go' }] },
    { role: 'assistant', content: [{ type: 'reasoning', signature: 'TEXT-SIG' }, { type: 'text', text: 'Checking.' }, { type: 'tool_call', id: 'c', name: 'f', arguments: '{}' }] },
    { role: 'user', content: [{ type: 'tool_result', callId: 'c', content: 'ok' }] },
  ] });
  assert.deepEqual(body.contents[1].parts, [{ text: 'Checking.', thoughtSignature: 'TEXT-SIG' }, { functionCall: { id: 'c', name: 'f', args: {} }, thoughtSignature: SKIP_SIGNATURE }]);
});

test('Vertex: a response body shows what Gemini sent, without the skip value', () => {
  const body = vertexCodec.encodeResponse({
    id: 'r', model: MODEL, stopReason: 'tool_use', usage: zeroUsage(), tier: 'standard',
    blocks: [{ kind: 'tool_call', id: 'c', name: 'f', arguments: '{}' }],
  }, { id: 'r', model: MODEL, createdAt: 1, tier: 'standard' });
  assert.equal(JSON.stringify(body).includes(SKIP_SIGNATURE), false);
});

test('Interactions: a Chat caller\'s replayed calls get the skip value on the first call of each model step only', () => {
  const body = interactionsCodec.encodeRequest(chatHistory());
  assert.deepEqual(interactionsCalls(body), [['call_1', SKIP_SIGNATURE], ['call_2', undefined], ['call_3', SKIP_SIGNATURE]]);
});

test('Interactions: a Responses caller\'s replayed call gets the skip value', () => {
  assert.deepEqual(interactionsCalls(interactionsCodec.encodeRequest(responsesHistory())), [['call_1', SKIP_SIGNATURE]]);
});

test('Interactions: Gemini\'s own signatures are kept (on the call, or on the thought step before it); no skip value added', () => {
  const body = interactionsCodec.encodeRequest(signedHistory());
  assert.deepEqual(body.input.map((s: any) => s.type), ['user_input', 'function_call', 'function_call', 'function_result', 'function_result', 'thought', 'function_call', 'function_result']);
  assert.deepEqual(interactionsCalls(body), [['c1', 'REAL-1'], ['c2', undefined], ['c3', undefined]]);
  assert.deepEqual(body.input[5], { type: 'thought', signature: 'REAL-2' });
  assert.equal(JSON.stringify(body).includes(SKIP_SIGNATURE), false);
});
