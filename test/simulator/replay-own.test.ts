// `replay` on the project's own fixtures (test/fixtures/): every route frames the lines its own way
// with the payload bytes untouched, and the simulator reads nothing outside its configured folder.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Simulator } from '../../lib/simulator/server.ts';
import { bedrockChunkTexts, directive, parseSSE, start, vertexToken } from './helpers.ts';
import { OWN_FIXTURES } from '../helpers/recorded.ts';

let sim: Simulator;
before(async () => { sim = await start({ fixturesDir: OWN_FIXTURES }); });
after(() => sim.close());

const lines = (file: string) => readFileSync(join(OWN_FIXTURES, file), 'utf8').split('\n').filter((l) => l.length > 0);
const replay = (file: string) => directive({ replay: file });
const post = (s: Simulator, path: string, headers: Record<string, string>, body: object) =>
  fetch(`${s.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
const responses = (s: Simulator, file: string, stream = true) =>
  post(s, '/v1/responses', { authorization: 'Bearer k' }, { model: 'm', input: replay(file), stream });

test('Responses: event = payload type, data = the line verbatim; the SDK reads the text; .json sent as-is', async () => {
  const file = 'openai-responses/text.chunks.txt';
  const frames = parseSSE(await (await responses(sim, file)).text());
  const want = lines(file);
  assert.equal(want.length, 13);
  assert.deepEqual(frames.map((f) => f.data), want);
  assert.deepEqual(frames.map((f) => f.event), want.map((l) => JSON.parse(l).type));

  const client = new OpenAI({ apiKey: 'k', baseURL: `${sim.url}/v1`, maxRetries: 0 });
  const final = await client.responses.stream({ model: 'm', input: replay(file) }).finalResponse();
  assert.equal(final.output_text, 'Hello from the fixture.');
  assert.equal(final.usage?.output_tokens, 6);

  const json = await responses(sim, 'openai-responses/text.json', false);
  assert.equal(json.headers.get('content-type'), 'application/json');
  assert.equal(await json.text(), readFileSync(join(OWN_FIXTURES, 'openai-responses/text.json'), 'utf8'));
});

test('Chat: data-only frames, then data: [DONE]', async () => {
  const file = 'openai-chat/text.chunks.txt';
  const res = await post(sim, '/v1/chat/completions', { authorization: 'Bearer k' }, { model: 'm', messages: [{ role: 'user', content: replay(file) }], stream: true });
  assert.equal(await res.text(), [...lines(file), '[DONE]'].map((l) => `data: ${l}\n\n`).join(''));
});

test('Interactions: event = event_type, then event: done / [DONE]', async () => {
  const file = 'gemini-interactions/text.chunks.txt';
  const res = await post(sim, '/v1beta/interactions', { 'x-goog-api-key': 'k' }, { model: 'm', input: replay(file), stream: true });
  const want = lines(file).map((l) => `event: ${JSON.parse(l).event_type}\ndata: ${l}\n\n`).join('') + 'event: done\ndata: [DONE]\n\n';
  assert.equal(await res.text(), want);
});

test('Messages: event = type, the ping included', async () => {
  const file = 'anthropic-messages/text.chunks.txt';
  const res = await post(sim, '/v1/messages', { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    { model: 'm', max_tokens: 10, stream: true, messages: [{ role: 'user', content: replay(file) }] });
  const want = lines(file).map((l) => `event: ${JSON.parse(l).type}\ndata: ${l}\n\n`).join('');
  assert.ok(want.includes('event: ping\n'));
  assert.equal(await res.text(), want);
});

test('Vertex: data-only frames, no terminator', async () => {
  const file = 'gemini-vertex/text.chunks.txt';
  const token = await vertexToken(sim);
  const res = await post(sim, '/v1/projects/p/locations/global/publishers/google/models/g:streamGenerateContent?alt=sse',
    { authorization: `Bearer ${token}` }, { contents: [{ role: 'user', parts: [{ text: replay(file) }] }] });
  assert.equal(await res.text(), lines(file).map((l) => `data: ${l}\n\n`).join(''));
});

test('Bedrock: one event-stream chunk per line, its base64 bytes equal to the line', async () => {
  const file = 'anthropic-messages/text.chunks.txt';
  assert.deepEqual(await bedrockChunkTexts(sim, replay(file)), lines(file));
});

test('paths that leave the folder are refused with 400, and nothing of the target is sent', async () => {
  // A real file just outside the folder, so "refused" cannot be mistaken for "not found".
  const root = mkdtempSync(join(tmpdir(), 'sim-replay-'));
  const inside = join(root, 'inside');
  mkdirSync(inside);
  writeFileSync(join(root, 'secret.chunks.txt'), '{"type":"secret"}\n');
  writeFileSync(join(inside, 'ok.chunks.txt'), '{"type":"ok"}\n');
  symlinkSync(join(root, 'secret.chunks.txt'), join(inside, 'link.chunks.txt'));
  const confined = await start({ fixturesDir: inside });
  try {
    const ok = await responses(confined, 'ok.chunks.txt');
    assert.equal(ok.status, 200);
    assert.equal(parseSSE(await ok.text())[0]?.data, '{"type":"ok"}');
    for (const file of ['../secret.chunks.txt', 'sub/../../secret.chunks.txt', join(root, 'secret.chunks.txt'), 'link.chunks.txt', '..']) {
      const res = await responses(confined, file);
      const body = await res.text();
      assert.equal(res.status, 400, file);
      assert.match(body, /outside the fixtures directory/, file);
      assert.ok(!body.includes('"secret"'), file);
    }
    const missing = await responses(confined, 'missing.chunks.txt');
    assert.equal(missing.status, 400);
    assert.match(await missing.text(), /cannot read missing\.chunks\.txt/);
  } finally { await confined.close(); rmSync(root, { recursive: true, force: true }); }
});

test('without a configured folder every replay is refused', async () => {
  const bare = await start({ fixturesDir: undefined });
  try {
    const res = await responses(bare, 'openai-responses/text.chunks.txt');
    assert.equal(res.status, 400);
    assert.match(await res.text(), /no replay folder is configured/);
  } finally { await bare.close(); }
});
