// A provider stream that broke or failed is charged the input estimate plus the output the frames
// that carry output hold at most (lib/http/pipeline.ts unpricedUsage): Responses' response.created,
// response.in_progress and response.failed repeat the whole request (instructions, tools: tens of
// KB for a coding agent) and are not output. Streamed (passthrough) and non-streamed (assembled)
// alike, at the same tier: the one the provider named, else the committed one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startTestGateway, sim, waitFor, type TestGateway } from '../helpers/gateway.ts';

const INSTRUCTIONS = 'You are a careful coding agent. Follow the repository conventions. '.repeat(800);
const TOOLS = Array.from({ length: 20 }, (_, i) => ({
  type: 'function', name: `tool_${i}`, description: 'Reads a file of the repository and returns its text. '.repeat(10),
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, strict: false,
}));

/** The response object vendor A's head and terminal events carry: the request repeated. */
const echo = (status: string, extra: Record<string, unknown> = {}) => ({
  id: 'resp_echo', object: 'response', created_at: 1770000000, status, model: 'gpt-5.4-mini-2026-03-17',
  instructions: INSTRUCTIONS, tools: TOOLS, output: [], usage: null, service_tier: 'auto', ...extra,
});
const created = { type: 'response.created', sequence_number: 0, response: echo('in_progress') };
const inProgress = { type: 'response.in_progress', sequence_number: 1, response: echo('in_progress') };
/** Failed, naming the tier that served (standard, while the request committed to flex). */
const failed = (seq: number) => ({
  type: 'response.failed', sequence_number: seq,
  response: echo('failed', { service_tier: 'default', error: { code: 'server_error', message: 'The server had an error.' } }),
});
const DELTAS = 30;
const delta = (i: number) => ({
  type: 'response.output_text.delta', sequence_number: 2 + i, item_id: 'msg_echo', output_index: 0, content_index: 0,
  delta: `word${i} `, logprobs: [], obfuscation: 'abc',
});

let t: TestGateway;
let dir: string;
let openai: OpenAI;
let key: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'broken-estimate-'));
  mkdirSync(join(dir, 'openai-responses'));
  const lines = (events: object[]) => events.map((e) => JSON.stringify(e)).join('\n') + '\n';
  writeFileSync(join(dir, 'openai-responses', 'echo-failed.chunks.txt'), lines([created, failed(1)]));
  const deltas = Array.from({ length: DELTAS }, (_, i) => delta(i));
  writeFileSync(join(dir, 'openai-responses', 'echo-deltas-failed.chunks.txt'), lines([created, inProgress, ...deltas, failed(2 + DELTAS)]));
  t = await startTestGateway({ config: { simulator: { fixturesDir: dir } } });
  ({ key } = await t.newOrg({ balance: 10_000_000 }));
  openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
});
after(async () => { await t.close(); rmSync(dir, { recursive: true, force: true }); });

/** Flex committed (the simulator's flex queue answers at once), the echo replayed. */
const request = (fixture: string) => ({
  model: 'gpt-5.4-mini', start_within: '00h-00m-30s', provider: ['vendor_a'], instructions: INSTRUCTIONS, tools: TOOLS,
  max_output_tokens: 4_000, input: `fix the build ${sim({ replay: `openai-responses/${fixture}`, flex_start_ms: 0 })}`,
});

async function record(id: string | null): Promise<any> {
  await waitFor(() => t.gw.services.inflight.size === 0, 'idle');
  await t.gw.services.usage.flush();
  const res = await fetch(`${t.url}/v1/usage/requests?limit=100`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as any).data.find((r: any) => r.id === id);
}

/** The non-streamed answer: a 502 whose x-service-cost is what its record says it was charged. */
async function whole(fixture: string): Promise<any> {
  const err: any = await openai.responses.create(request(fixture) as any).then(() => assert.fail('the request did not fail'), (e) => e);
  assert.equal(err.status, 502, err.message);
  const rec = await record(err.headers.get('x-request-id'));
  assert.equal(err.headers.get('x-service-cost'), String(rec.cost_micro_usd), 'x-service-cost on the error answer');
  return rec;
}

/** The streamed answer (passed through): the provider's own response.failed ends it. */
async function streamed(fixture: string): Promise<any> {
  const { data, response } = await openai.responses.create({ ...request(fixture), stream: true } as any).withResponse();
  const types: string[] = [];
  for await (const ev of data as any) types.push(ev.type);
  assert.equal(types.at(-1), 'response.failed');
  return record(response.headers.get('x-request-id'));
}

/** gpt-5.4-mini standard, micro-USD per million tokens. */
const STANDARD = { input: 750_000, output: 4_500_000 };
const part = (tokens: number, perM: number): number => (tokens > 0 ? Math.ceil((tokens * perM) / 1e6) : 0);

test('a stream that failed before any output is charged the input estimate and no output, streamed and not, at the tier the provider named', async () => {
  const s = await streamed('echo-failed.chunks.txt');
  const p = await whole('echo-failed.chunks.txt');
  for (const rec of [s, p]) {
    assert.equal(rec.output_tokens, 0, `no output was generated (${rec.status}: ${rec.output_tokens} output tokens charged)`);
    assert.equal(rec.tier, 'standard', 'response.failed says the default tier served');
    // The input estimate (each body's bytes / 4: the streamed one says "stream":true besides).
    assert.equal(rec.cost_micro_usd, part(rec.input_tokens, STANDARD.input));
  }
});

test('a stream that failed after text deltas is charged the output those deltas hold, not the echo around them, streamed and not', async () => {
  const s = await streamed('echo-deltas-failed.chunks.txt');
  const p = await whole('echo-deltas-failed.chunks.txt');
  // Vendor A's framing of each delta (`event: <type>\ndata: <json>\n\n`), at 64 bytes a token at most.
  const bytes = Array.from({ length: DELTAS }, (_, i) => Buffer.byteLength(`event: ${delta(i).type}\ndata: ${JSON.stringify(delta(i))}\n\n`))
    .reduce((a, b) => a + b, 0);
  const output = Math.ceil(bytes / 64);
  for (const rec of [s, p]) {
    assert.equal(rec.output_tokens, output, `${DELTAS} deltas of ${bytes} bytes (${rec.status}: ${rec.output_tokens} output tokens charged)`);
    assert.equal(rec.tier, 'standard', 'response.failed says the default tier served');
    assert.equal(rec.cost_micro_usd, part(rec.input_tokens, STANDARD.input) + part(output, STANDARD.output));
  }
});

test('a screenshot in a stream that broke before its usage is charged as an image (≈ 1,600 tokens), not as its base64 bytes / 4: the hold too', async () => {
  // A 1920 × 1080 PNG header and 5 MB of pixels, as a coding agent pastes one: 1.75 million tokens
  // as text, ≈ 8.7 USD on gpt-5.5; at most 1,600 tokens as an image.
  const pixels = Buffer.alloc(5 * 1024 * 1024, 7);
  pixels.writeUInt32BE(0x89504e47, 0);
  pixels.write('IHDR', 12, 'latin1');
  pixels.writeUInt32BE(1920, 16);
  pixels.writeUInt32BE(1080, 20);
  const image = `data:image/png;base64,${pixels.toString('base64')}`;
  const limits = async () => (await (await fetch(`${t.url}/v1/limits`, { headers: { authorization: `Bearer ${key}` } })).json() as any).managed.balance;
  const before = (await limits()).remaining_micro_usd;
  let held = 0;
  const stream = await openai.chat.completions.create({
    model: 'gpt-5.5', start_within: 'now', stream: true, stream_options: { include_usage: true },
    messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }, { type: 'text', text: `describe it ${sim({ reset_after_tokens: 3 })}` }] }],
  } as any).withResponse();
  held = (await limits()).reserved_micro_usd;
  await assert.rejects(async () => { for await (const _ of stream.data as any) { /* drained */ } });
  const rec = await record(stream.response.headers.get('x-request-id'));
  assert.equal(rec.usage_estimated, true);
  const text = Math.ceil((Buffer.byteLength(JSON.stringify({ model: 'gpt-5.5', stream: true, stream_options: { include_usage: true }, messages: [] })) + 200) / 4);
  assert.ok(rec.input_tokens >= 1_600 && rec.input_tokens < 1_600 + text, `input_tokens ${rec.input_tokens}`);
  assert.equal(before - (await limits()).remaining_micro_usd, rec.cost_micro_usd, 'the balance paid what the record says');
  assert.ok(rec.cost_micro_usd < 50_000, `charged ${rec.cost_micro_usd} micro-USD`);
  assert.ok(held < 1_000_000, `held ${held} micro-USD while it ran`);
});
