// `replay` of recorded provider traffic (../shared/fixtures/recorded, skipped without it): sent back
// in each route's framing, payload bytes untouched. replay-own.test.ts covers the same framing and
// the folder confinement on the project's own fixtures.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import type { Simulator } from '../../lib/simulator/server.ts';
import { bedrockChunkTexts, directive, parseSSE, start, vertexToken } from './helpers.ts';
import { HAS_RECORDED, RECORDED, recordedOnly } from '../helpers/recorded.ts';

const FIXTURES = `${RECORDED}/`;

let sim: Simulator;
before(async () => { if (HAS_RECORDED) sim = await start({ fixturesDir: RECORDED }); });
after(() => sim?.close());

const lines = (file: string) => readFileSync(FIXTURES + file, 'utf8').split('\n').filter((l) => l.length > 0);
const replay = (file: string) => directive({ replay: file });

function post(path: string, headers: Record<string, string>, body: object) {
  return fetch(`${sim.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
}

/** Event-named formats: every frame's event is the payload's type, data is the line verbatim. */
function assertNamedFrames(body: string, expected: string[], key: 'type' | 'event_type', tail: string[] = []) {
  const frames = parseSSE(body);
  assert.deepEqual(frames.slice(0, expected.length).map((f) => f.data), expected);
  frames.slice(0, expected.length).forEach((f, i) => {
    const m = new RegExp(`"${key}"\\s*:\\s*"([^"]+)"`).exec(expected[i]!);
    assert.equal(f.event, m?.[1]);
  });
  assert.deepEqual(frames.slice(expected.length).map((f) => `${f.event}|${f.data}`), tail);
}

test('vendor_a Responses: recorded stream (SDK parses it), broken-JSON lines sent as-is, .json body', recordedOnly, async () => {
  const file = 'openai-responses/issue-20047-openai-responses.chunks.txt';
  const res = await post('/v1/responses', { authorization: 'Bearer k' }, { model: 'm', input: replay(file), stream: true });
  assertNamedFrames(await res.text(), lines(file), 'type');

  const client = new OpenAI({ apiKey: 'k', baseURL: `${sim.url}/v1`, maxRetries: 0 });
  const final = await client.responses.stream({ model: 'm', input: replay(file) }).finalResponse();
  assert.equal(final.output_text, 'OK');

  const broken = 'openai-responses/parallel-tool-call-wrapper.1.chunks.txt';
  const raw = await post('/v1/responses', { authorization: 'Bearer k' }, { model: 'm', input: replay(broken), stream: true });
  assertNamedFrames(await raw.text(), lines(broken), 'type');

  const json = 'openai-responses/issue-20047-openai-responses.json';
  const body = await post('/v1/responses', { authorization: 'Bearer k' }, { model: 'm', input: replay(json) });
  assert.equal(await body.text(), readFileSync(FIXTURES + json, 'utf8'));
});

test('vendor_a Chat: data-only lines then data: [DONE]', recordedOnly, async () => {
  const file = 'openai-chat/azure-model-router.1.chunks.txt';
  const res = await post('/v1/chat/completions', { authorization: 'Bearer k' }, { model: 'm', messages: [{ role: 'user', content: replay(file) }], stream: true });
  const frames = parseSSE(await res.text());
  assert.ok(frames.every((f) => f.event === undefined));
  assert.deepEqual(frames.map((f) => f.data), [...lines(file), '[DONE]']);
});

test('vendor_b Interactions: event = event_type, then event: done / [DONE]', recordedOnly, async () => {
  const file = 'gemini-interactions/tool-call-step1.chunks.txt';
  const res = await post('/v1beta/interactions', { 'x-goog-api-key': 'k' }, { model: 'm', input: replay(file), stream: true });
  assertNamedFrames(await res.text(), lines(file), 'event_type', ['done|[DONE]']);
});

test('vendor_c Messages: event = type', recordedOnly, async () => {
  const file = 'anthropic-messages/anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt';
  const res = await post('/v1/messages', { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    { model: 'm', max_tokens: 10, stream: true, messages: [{ role: 'user', content: replay(file) }] });
  assertNamedFrames(await res.text(), lines(file), 'type');
});

test('cloud_a Vertex: data-only lines, no terminator', recordedOnly, async () => {
  const file = 'gemini-vertex/google-vertex-stream-tool-call-arguments-nested.1.chunks.txt';
  const token = await vertexToken(sim);
  const res = await post('/v1/projects/p/locations/global/publishers/google/models/g:streamGenerateContent?alt=sse',
    { authorization: `Bearer ${token}` }, { contents: [{ role: 'user', parts: [{ text: replay(file) }] }] });
  assert.deepEqual(parseSSE(await res.text()).map((f) => f.data), lines(file));
});

test('cloud_b Bedrock: each recorded Anthropic line becomes one chunk, base64 bytes equal to the line', recordedOnly, async () => {
  const file = 'anthropic-messages/anthropic-json-tool.1.chunks.txt';
  assert.deepEqual(await bedrockChunkTexts(sim, replay(file)), lines(file));
});
