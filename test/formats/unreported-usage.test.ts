// Every wire's decoders tell an answer that completed without the provider's usage (the finish's
// `unreported`, IRResponse.unreported) from one that reported it, zeros included: only the absence
// is charged the estimate (lib/stream/respond.ts). And the passthrough taps say the same of a
// stream (TapState.partial, TapState.answered; Responses' completed event is final without usage).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CODECS } from '../../lib/formats/index.ts';
import type { FormatCodec, SSEFrame, TapState } from '../../lib/formats/types.ts';
import { type IREvent, zeroUsage } from '../../lib/ir.ts';
import { decodeAll } from '../helpers/decode.ts';

const finishOf = (events: IREvent[]): Extract<IREvent, { type: 'finish' }> => {
  const finish = events.find((ev) => ev.type === 'finish');
  assert.ok(finish, `a finish among ${JSON.stringify(events)}`);
  return finish as Extract<IREvent, { type: 'finish' }>;
};
const data = (o: object): SSEFrame => ({ data: JSON.stringify(o) });
const named = (event: string, o: object): SSEFrame => ({ event, data: JSON.stringify({ type: event, ...o }) });

/** Decoded as a stream, and its last frame's body decoded whole where `body` is given. */
function check(codec: FormatCodec, without: SSEFrame[], withZeros: SSEFrame[]): void {
  const bare = decodeAll(codec, without);
  assert.equal(finishOf(bare.events).unreported, true, `${codec.name}: no usage is unreported`);
  assert.equal(bare.res.unreported, true, `${codec.name}: the collected response says so too`);
  const zeros = decodeAll(codec, withZeros);
  assert.equal(finishOf(zeros.events).unreported, undefined, `${codec.name}: usage of zeros is reported`);
  assert.equal(zeros.res.unreported, undefined);
}

test('vertex: a finishReason chunk without usageMetadata is unreported; counts of 0 are reported; a later counts chunk still waited for', () => {
  const text = { candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP' }] };
  const zeros = { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 };
  check(CODECS.vertex, [data(text)], [data({ ...text, usageMetadata: zeros })]);
  // trafficType alone is no count.
  assert.equal(finishOf(decodeAll(CODECS.vertex, [data({ ...text, usageMetadata: { trafficType: 'ON_DEMAND' } })]).events).unreported, true);
  const later = decodeAll(CODECS.vertex, [data(text), data({ usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 } })]);
  const finish = finishOf(later.events);
  assert.deepEqual([finish.unreported, finish.usage.inputTokens, finish.usage.outputTokens], [undefined, 3, 2]);
  assert.equal(CODECS.vertex.decodeResponse(text).unreported, true);
  assert.equal(CODECS.vertex.decodeResponse({ ...text, usageMetadata: zeros }).unreported, undefined);
});

test('chat: [DONE] after a finish_reason without the usage chunk is unreported; a body without usage too', () => {
  const chunk = (o: object): SSEFrame => data({ id: 'c1', object: 'chat.completion.chunk', model: 'm', ...o });
  const head = [chunk({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] }), chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })];
  const zeros = chunk({ choices: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } });
  check(CODECS.chat, [...head, { data: '[DONE]' }], [...head, zeros, { data: '[DONE]' }]);
  const body = { id: 'c1', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] };
  assert.equal(CODECS.chat.decodeResponse(body).unreported, true);
  assert.equal(CODECS.chat.decodeResponse({ ...body, usage: { prompt_tokens: 0, completion_tokens: 0 } }).unreported, undefined);
});

test('responses: response.completed without usage is unreported, as a body without usage', () => {
  const response = { id: 'r1', object: 'response', status: 'completed', model: 'm', output: [] };
  const delta = named('response.output_text.delta', { output_index: 0, content_index: 0, delta: 'hi' });
  const zeros = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  check(CODECS.responses,
    [delta, named('response.completed', { response })],
    [delta, named('response.completed', { response: { ...response, usage: zeros } })]);
  assert.equal(CODECS.responses.decodeResponse(response).unreported, true);
  assert.equal(CODECS.responses.decodeResponse({ ...response, usage: zeros }).unreported, undefined);
});

test('messages: a message_delta without its output count is unreported (message_start\'s 1 is a running count); Bedrock\'s metrics report it', () => {
  const start = named('message_start', { message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 20, output_tokens: 1 } } });
  const body = [
    named('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    named('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hi' } }),
    named('content_block_stop', { index: 0 }),
  ];
  const delta = (usage?: object): SSEFrame => named('message_delta', { delta: { stop_reason: 'end_turn' }, ...(usage ? { usage } : {}) });
  const stop = named('message_stop', {});
  check(CODECS.messages, [start, ...body, delta(), stop], [start, ...body, delta({ output_tokens: 0 }), stop]);
  // The floor it reported is kept for the estimate: message_start's input.
  assert.equal(finishOf(decodeAll(CODECS.messages, [start, ...body, delta({}), stop]).events).usage.inputTokens, 20);
  const metrics = named('message_stop', { 'amazon-bedrock-invocationMetrics': { inputTokenCount: 20, outputTokenCount: 4 } });
  assert.equal(finishOf(decodeAll(CODECS.messages, [start, ...body, delta({}), metrics]).events).unreported, undefined);
  const message = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn' };
  assert.equal(CODECS.messages.decodeResponse({ ...message, usage: { input_tokens: 20 } }).unreported, true);
  assert.equal(CODECS.messages.decodeResponse({ ...message, usage: { input_tokens: 0, output_tokens: 0 } }).unreported, undefined);
});

test('interactions: interaction.completed without usage is unreported, as a body without usage', () => {
  const interaction = { id: 'i1', status: 'completed', model: 'gemini' };
  const completed = (i: object): SSEFrame => ({ event: 'interaction.completed', data: JSON.stringify({ event_type: 'interaction.completed', interaction: i }) });
  const zeros = { total_input_tokens: 0, total_output_tokens: 0 };
  check(CODECS.interactions, [completed(interaction)], [completed({ ...interaction, usage: zeros })]);
  assert.equal(CODECS.interactions.decodeResponse(interaction).unreported, true);
  assert.equal(CODECS.interactions.decodeResponse({ ...interaction, usage: zeros }).unreported, undefined);
});

test('taps: Responses\' completed event is final without usage, a failed one only with it; Messages\' start is partial until a delta states its output; Chat\'s finish chunk is the answer\'s end', () => {
  const tap = CODECS.responses.tap;
  const frame = { event: 'response.completed', data: '' };
  assert.equal(tap.isFinal(frame, { type: 'response.completed', response: { status: 'completed' } }), true);
  assert.equal(tap.isFinal({ event: 'response.failed', data: '' }, { type: 'response.failed', response: { usage: null } }), false);
  assert.equal(tap.isFinal({ event: 'response.failed', data: '' }, { type: 'response.failed', response: { usage: { input_tokens: 1 } } }), true);

  const acc: TapState = { usage: zeroUsage(), sawUsage: false };
  CODECS.messages.tap.read({ type: 'message_start', message: { usage: { input_tokens: 20, output_tokens: 1 } } }, acc);
  assert.deepEqual([acc.sawUsage, acc.partial], [true, true]);
  CODECS.messages.tap.read({ type: 'message_delta', usage: {} }, acc);
  assert.equal(acc.partial, true, 'no output count: still the running one');
  CODECS.messages.tap.read({ type: 'message_delta', usage: { output_tokens: 7 } }, acc);
  assert.equal(acc.partial, false);

  const chat: TapState = { usage: zeroUsage(), sawUsage: false };
  CODECS.chat.tap.read({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] }, chat);
  assert.equal(chat.answered, undefined);
  CODECS.chat.tap.read({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }, chat);
  assert.deepEqual([chat.answered, chat.sawUsage], [true, false]);
});
