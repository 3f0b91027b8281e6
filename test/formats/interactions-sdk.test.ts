// The Interactions encoders' output, served over HTTP, parsed by the official @google/genai SDK
// (its `interactions` surface: create({stream:true}) yields the SSE events, create() the body).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { GoogleGenAI } from '@google/genai';
import { interactionsCodec } from '../../lib/formats/interactions/index.ts';
import type { EncodeContext } from '../../lib/formats/types.ts';
import { closeCodecServers, serveScenario } from '../helpers/codec-server.ts';
import { type IREvent, type IRResponse, zeroUsage } from '../../lib/ir.ts';

const CTX: EncodeContext = { id: 'v1_gw_sdk', model: 'gemini-gw', createdAt: 1_760_000_000, tier: 'flex' };
const routing = { provider: 'cloud_a' as const, requested_provider: 'vendor_b' as const, tier: 'flex' as const, reason: 'fallback', fallback_attempts: 1, mode: 'managed' as const };

let scenario: { events: IREvent[] } | { response: IRResponse } = { events: [] };
let ai: GoogleGenAI;
const requests: { url?: string; body: any }[] = [];

before(async () => {
  const url = await serveScenario(interactionsCodec, CTX, () => scenario, (u, body) => requests.push({ url: u, body }));
  // Pinned to /v1, the gateway's path (README): the SDK's default moved from v1beta (2.x) to v1 (3.x).
  ai = new GoogleGenAI({ apiKey: 'x', httpOptions: { baseUrl: url, apiVersion: 'v1' } });
});
after(closeCodecServers);

const STREAM: IREvent[] = [
  { type: 'start', id: 'msg_upstream', model: 'claude-x' },
  { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
  { type: 'reasoning_delta', index: 0, text: 'Thinking about Paris.' },
  { type: 'signature', index: 0, signature: 'c2lnbmF0dXJl' },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { kind: 'text' } },
  { type: 'text_delta', index: 1, text: 'Let me ' },
  { type: 'text_delta', index: 1, text: 'check.' },
  { type: 'block_stop', index: 1 },
  { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'toolu_01', name: 'get_weather' } },
  { type: 'args_delta', index: 2, json: '{"city":' },
  { type: 'args_delta', index: 2, json: '"Paris"}' },
  { type: 'block_stop', index: 2 },
  { type: 'finish', reason: 'tool_use', usage: { ...zeroUsage(), inputTokens: 30, outputTokens: 25, reasoningTokens: 10 }, tier: 'flex',
    extras: { cost: { total_micro_usd: 12, currency: 'USD' }, routing } },
];

test('interactions.create({stream:true}) yields every event with text, signature, arguments, usage, tier', async () => {
  scenario = { events: STREAM };
  const stream = await ai.interactions.create({ model: 'gemini-gw', input: 'Weather in Paris?', stream: true });
  const events: any[] = [];
  for await (const ev of stream) events.push(ev);
  assert.equal(requests.at(-1)!.url, '/v1/interactions');
  assert.deepEqual(events.map((e) => e.event_type), [
    'interaction.created', 'interaction.status_update',
    'step.start', 'step.delta', 'step.delta', 'step.stop',
    'step.start', 'step.delta', 'step.delta', 'step.stop',
    'step.start', 'step.delta', 'step.delta', 'step.stop',
    'interaction.completed',
  ]);
  const deltas = events.filter((e) => e.event_type === 'step.delta').map((e) => e.delta);
  assert.equal(deltas.filter((d) => d.type === 'text').map((d) => d.text).join(''), 'Let me check.');
  assert.equal(deltas.find((d) => d.type === 'thought_signature').signature, 'c2lnbmF0dXJl');
  assert.equal(deltas.find((d) => d.type === 'thought_summary').content.text, 'Thinking about Paris.');
  assert.deepEqual(JSON.parse(deltas.filter((d) => d.type === 'arguments_delta').map((d) => d.arguments).join('')), { city: 'Paris' });
  const call = events.find((e) => e.event_type === 'step.start' && e.step.type === 'function_call');
  assert.deepEqual([call.step.id, call.step.name], ['toolu_01', 'get_weather']);
  const done = events.at(-1).interaction;
  assert.equal(done.status, 'requires_action');
  assert.equal(done.service_tier, 'flex');
  assert.equal(done.usage.total_input_tokens, 30);
  assert.equal(done.usage.total_output_tokens, 15);
  assert.equal(done.usage.total_thought_tokens, 10);
  // the spec's usage frame fields pass through the SDK
  assert.deepEqual([done.usage.input_tokens, done.usage.output_tokens], [30, 25]);
  assert.deepEqual(done.usage.cost, { total_micro_usd: 12, currency: 'USD' });
  assert.deepEqual(done.usage.routing, routing);
});

test('an IR error mid-stream reaches the SDK caller as an error event', async () => {
  scenario = { events: [{ type: 'start' }, { type: 'block_start', index: 0, block: { kind: 'text' } }, { type: 'text_delta', index: 0, text: 'x' }, { type: 'error', code: 'provider_error', message: 'Upstream failed' }] };
  const stream = await ai.interactions.create({ model: 'gemini-gw', input: 'hi', stream: true });
  const events: any[] = [];
  let thrown: unknown;
  try { for await (const ev of stream) events.push(ev); } catch (e) { thrown = e; }
  // The SDK yields the error event as the last event (it does not throw) and stops at [DONE].
  assert.equal(thrown, undefined);
  assert.deepEqual(events.at(-1), { error: { code: 'provider_error', message: 'Upstream failed' }, event_type: 'error' });
});

test('non-streamed interactions.create parses encodeResponse', async () => {
  scenario = { response: {
    id: 'up', model: 'claude-x', stopReason: 'end', tier: 'flex',
    blocks: [{ kind: 'reasoning', text: '', signature: 'sig' }, { kind: 'text', text: 'Hello there' }],
    usage: { ...zeroUsage(), inputTokens: 8, outputTokens: 5, reasoningTokens: 2 },
  } };
  const interaction: any = await ai.interactions.create({ model: 'gemini-gw', input: 'hi' });
  assert.equal(interaction.id, 'v1_gw_sdk');
  assert.equal(interaction.status, 'completed');
  assert.equal(interaction.service_tier, 'flex');
  assert.deepEqual(interaction.steps.map((s: any) => s.type), ['thought', 'model_output']);
  assert.equal(interaction.steps[0].signature, 'sig');
  assert.equal(interaction.steps[1].content[0].text, 'Hello there');
  assert.equal(interaction.usage.total_thought_tokens, 2);
  assert.equal(interaction.usage.total_output_tokens, 3);
});
