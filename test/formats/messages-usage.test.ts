// Anthropic usage → IR: the 1-hour part of the cache writes (usage.cache_creation
// .ephemeral_1h_input_tokens) reaches the IR on every path that reads Anthropic usage — the
// non-streamed body (vendor C and Bedrock's InvokeModel), the stream decoder (both routes: cloud_b's
// adapter re-frames Bedrock's chunks as these same frames) and the passthrough tap — and a later
// frame that only restates the total (message_delta) keeps it, as every other counter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { messagesCodec } from '../../lib/formats/messages/index.ts';
import { mergeAnthropicUsage, zeroCounters } from '../../lib/formats/messages/usage.ts';
import type { SSEFrame, TapState } from '../../lib/formats/types.ts';
import { zeroUsage } from '../../lib/ir.ts';
import { decodeAll } from '../helpers/decode.ts';
import { OWN_FIXTURES } from '../helpers/recorded.ts';

const FIXTURE = `${OWN_FIXTURES}/anthropic-messages/cache-write-1h`;
const frames = (): SSEFrame[] => readFileSync(`${FIXTURE}.chunks.txt`, 'utf8').split('\n').filter((l) => l.trim())
  .map((data) => ({ event: JSON.parse(data).type, data }));

/** The fixture's usage: 12 uncached + 100,000 written to the 1-hour cache. */
const expected = (output: number) => ({
  ...zeroUsage(), inputTokens: 100_012, cacheWriteTokens: 100_000, cacheWrite1hTokens: 100_000, outputTokens: output,
});

test('mergeAnthropicUsage reads cache_creation.ephemeral_1h_input_tokens; a usage without cache_creation keeps it', () => {
  const c = zeroCounters();
  mergeAnthropicUsage(c, { input_tokens: 5, cache_creation_input_tokens: 300, cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 } });
  assert.equal(c.cacheWrite, 300);
  assert.equal(c.cacheWrite1h, 200);
  mergeAnthropicUsage(c, { output_tokens: 9, cache_creation_input_tokens: 300 });
  assert.equal(c.cacheWrite1h, 200);
  mergeAnthropicUsage(c, { cache_creation: null });
  assert.equal(c.cacheWrite1h, 200);
});

test('a non-streamed body (vendor C, and Bedrock InvokeModel, the same body) decodes the 1-hour writes', () => {
  const res = messagesCodec.decodeResponse(JSON.parse(readFileSync(`${FIXTURE}.json`, 'utf8')));
  assert.deepEqual(res.usage, expected(29));
});

test('a stream: message_start\'s 1-hour writes survive message_delta, which restates only the total', () => {
  assert.deepEqual(decodeAll(messagesCodec, frames()).res.usage, expected(30));
});

test('a Bedrock stream whose message_stop carries invocation metrics keeps the 1-hour writes', () => {
  const f = frames();
  const stop = f.findIndex((x) => x.event === 'message_stop');
  f[stop] = { event: 'message_stop', data: JSON.stringify({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': {
    inputTokenCount: 12, outputTokenCount: 30, cacheReadInputTokenCount: 0, cacheWriteInputTokenCount: 100_000, invocationLatency: 900, firstByteLatency: 300,
  } }) };
  assert.deepEqual(decodeAll(messagesCodec, f).res.usage, expected(30));
});

test('the passthrough tap keeps the 1-hour writes from message_start to the final message_delta', () => {
  const state: TapState = { usage: zeroUsage(), sawUsage: false };
  for (const frame of frames()) {
    if (messagesCodec.tap.carriesUsage(frame)) messagesCodec.tap.read(JSON.parse(frame.data), state);
  }
  assert.deepEqual(state.usage, expected(30));
});

test('usage without a 1-hour count has no cacheWrite1hTokens (the same IR as before)', () => {
  const res = messagesCodec.decodeResponse({ id: 'm', model: 'x', content: [], stop_reason: 'end_turn',
    usage: { input_tokens: 3, cache_creation_input_tokens: 7, cache_read_input_tokens: 0, output_tokens: 2 } });
  assert.deepEqual(res.usage, { ...zeroUsage(), inputTokens: 10, cacheWriteTokens: 7, outputTokens: 2 });
});
