// The Messages encoders' output, served over HTTP, parsed by the official Anthropic SDK.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { messagesCodec } from '../../lib/formats/messages/index.ts';
import type { EncodeContext } from '../../lib/formats/types.ts';
import { closeCodecServers, serveScenario } from '../helpers/codec-server.ts';
import { type IREvent, type IRResponse, zeroUsage } from '../../lib/ir.ts';

const CTX: EncodeContext = { id: 'msg_gw_sdk', model: 'claude-gw', createdAt: 1_760_000_000, tier: 'flex' };
const routing = { provider: 'vendor_b' as const, requested_provider: 'vendor_b' as const, tier: 'flex' as const, reason: 'primary', fallback_attempts: 0, mode: 'managed' as const };

/** What the server answers next: IR events (streamed through the encoder) or an IR response. */
let scenario: { events: IREvent[] } | { response: IRResponse } = { events: [] };
let client: Anthropic;

before(async () => {
  const url = await serveScenario(messagesCodec, CTX, () => scenario);
  client = new Anthropic({ apiKey: 'x', baseURL: url, maxRetries: 0 });
});
after(closeCodecServers);

const params = { model: 'claude-gw', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'hi' }] };

const TOOL_STREAM: IREvent[] = [
  { type: 'start', id: 'resp_upstream', model: 'gpt-x' },
  { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
  { type: 'reasoning_delta', index: 0, text: 'Need the ' },
  { type: 'reasoning_delta', index: 0, text: 'weather.' },
  { type: 'signature', index: 0, signature: 'EqQBsignature', anthropic: true },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 2, block: { kind: 'text' } },
  { type: 'text_delta', index: 2, text: 'Checking ' },
  { type: 'text_delta', index: 2, text: 'Paris.' },
  { type: 'block_stop', index: 2 },
  { type: 'block_start', index: 5, block: { kind: 'tool_call', id: 'toolu_01', name: 'get_weather' } },
  { type: 'args_delta', index: 5, json: '{"city": "Par' },
  { type: 'args_delta', index: 5, json: 'is"}' },
  { type: 'block_stop', index: 5 },
  { type: 'finish', reason: 'tool_use', usage: { ...zeroUsage(), inputTokens: 120, cachedInputTokens: 20, outputTokens: 45, reasoningTokens: 12 }, tier: 'flex',
    extras: { cost: { total_micro_usd: 777, currency: 'USD' }, routing } },
];

test('messages.create({stream:true}) yields the events in order', async () => {
  scenario = { events: TOOL_STREAM };
  const stream = await client.messages.create({ ...params, stream: true });
  const types: string[] = [];
  let text = '';
  let json = '';
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    if (ev.type === 'content_block_delta' && ev.delta.type === 'input_json_delta') json += ev.delta.partial_json;
    if (ev.type === 'message_start') assert.equal(ev.message.usage.service_tier, 'flex');
  }
  assert.equal(types[0], 'message_start');
  assert.equal(types.at(-1), 'message_stop');
  assert.equal(text, 'Checking Paris.');
  assert.deepEqual(JSON.parse(json), { city: 'Paris' });
});

test('messages.stream().finalMessage() assembles thinking + signature, text, tool_use input, usage', async () => {
  scenario = { events: TOOL_STREAM };
  const msg = await client.messages.stream(params).finalMessage();
  assert.equal(msg.id, 'msg_gw_sdk');
  assert.equal(msg.model, 'claude-gw');
  assert.deepEqual(msg.content.map((b) => b.type), ['thinking', 'text', 'tool_use']);
  const [thinking, text, tool] = msg.content;
  assert.ok(thinking!.type === 'thinking' && thinking!.thinking === 'Need the weather.' && thinking!.signature === 'EqQBsignature');
  assert.ok(text!.type === 'text' && text!.text === 'Checking Paris.');
  assert.ok(tool!.type === 'tool_use' && tool!.id === 'toolu_01' && tool!.name === 'get_weather');
  assert.deepEqual(tool!.type === 'tool_use' ? tool!.input : undefined, { city: 'Paris' });
  assert.equal(msg.stop_reason, 'tool_use');
  assert.equal(msg.usage.input_tokens, 100);
  assert.equal(msg.usage.cache_read_input_tokens, 20);
  assert.equal(msg.usage.output_tokens, 45);
  assert.equal(msg.usage.service_tier, 'flex');
});

test('a stream without a start event still opens with message_start', async () => {
  scenario = { events: [
    { type: 'text_delta', index: 0, text: 'no start, no block_start' },
    { type: 'finish', reason: 'end', usage: { ...zeroUsage(), inputTokens: 3, outputTokens: 4 } },
  ] };
  const msg = await client.messages.stream(params).finalMessage();
  assert.deepEqual(msg.content, [{ type: 'text', text: 'no start, no block_start' }]);
  assert.equal(msg.stop_reason, 'end_turn');
  assert.equal(msg.usage.input_tokens, 3);
});

test('an IR error mid-stream raises in the SDK', async () => {
  scenario = { events: [
    { type: 'start' },
    { type: 'block_start', index: 0, block: { kind: 'text' } },
    { type: 'text_delta', index: 0, text: 'partial' },
    { type: 'error', code: 'overloaded', message: 'Upstream overloaded' },
  ] };
  await assert.rejects(client.messages.stream(params).finalMessage(), (e: unknown) => {
    assert.ok(e instanceof Anthropic.APIError);
    assert.match(String((e as Error).message), /Upstream overloaded/);
    return true;
  });
  const stream = await client.messages.create({ ...params, stream: true });
  await assert.rejects((async () => { for await (const _ of stream) { /* drain */ } })(), Anthropic.APIError);
});

test('non-streamed messages.create parses encodeResponse', async () => {
  scenario = { response: {
    id: 'up', model: 'gemini-x', stopReason: 'tool_use', tier: 'flex',
    blocks: [
      { kind: 'reasoning', text: 'think', signature: 'sig' },
      { kind: 'text', text: 'Hello' },
      { kind: 'tool_call', id: 'toolu_9', name: 'f', arguments: '{"a":[1,2]}', signature: 'gemini-sig' },
    ],
    usage: { ...zeroUsage(), inputTokens: 10, outputTokens: 5 },
    extras: { cost: { total_micro_usd: 9, currency: 'USD' }, routing },
  } };
  const msg = await client.messages.create(params);
  assert.deepEqual(msg.content.map((b) => b.type), ['thinking', 'text', 'thinking', 'tool_use']);
  const tool = msg.content[3]!;
  assert.deepEqual(tool.type === 'tool_use' ? tool.input : undefined, { a: [1, 2] });
  assert.equal(msg.usage.service_tier, 'flex');
  assert.equal(msg.usage.input_tokens, 10);
  assert.deepEqual((msg.usage as unknown as Record<string, unknown>).cost, { total_micro_usd: 9, currency: 'USD' });
});
