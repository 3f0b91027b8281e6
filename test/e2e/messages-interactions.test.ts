// The Messages and Interactions endpoints: one test per parameter rule and error of the spec,
// the States rules (stop_reason, usage.service_tier, Interaction status), replays of real provider
// recordings through the gateway, and the vendor_b → cloud_a fallback.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { GoogleGenAI } from '@google/genai';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { OWN_FIXTURES, RECORDED, recordedOnly } from '../helpers/recorded.ts';
import { recordUpstreamBodies } from '../helpers/upstream-bodies.ts';

let t: TestGateway;
let key: string;
let anthropic: Anthropic;
let openai: OpenAI;
let genai: any;
const FIX = OWN_FIXTURES;

before(async () => {
  t = await startTestGateway({ config: { simulator: { fixturesDir: OWN_FIXTURES } } });
  key = (await t.newOrg({ balance: 100_000_000 })).key;
  anthropic = new Anthropic({ authToken: key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  genai = new GoogleGenAI({ apiKey: 'unused', apiVersion: 'v1', httpOptions: { baseUrl: t.url, headers: { authorization: `Bearer ${key}` } } });
});
after(() => t.close());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) => fetch(t.url + path, {
  method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
});
const msg = (content: string) => [{ role: 'user', content }];

async function anthropicError(p: Promise<unknown>, status: number, code: string): Promise<void> {
  await assert.rejects(p, (err: any) => {
    assert.ok(err instanceof Anthropic.APIError, String(err));
    assert.equal(err.status, status);
    assert.equal(err.error.error.code, code);
    return true;
  });
}
async function genaiError(p: Promise<unknown>, status: number, code: string): Promise<void> {
  await assert.rejects(p, (err: any) => {
    assert.equal(err.status, status, String(err));
    assert.equal(err.error.error.code, code);
    return true;
  });
}
const m = (body: any) => anthropic.messages.create({ max_tokens: 256, ...body } as any);
const i = (body: any) => genai.interactions.create(body, { maxRetries: 0 });

/** A recording upstream: answers as vendor A or vendor C would, keeps the bodies it got. */
async function captureUpstream(): Promise<{ url: string; bodies: any[]; server: Server }> {
  const bodies: any[] = [];
  const anthropicStream = readFileSync(`${FIX}/anthropic-messages/text.chunks.txt`, 'utf8').split('\n').filter(Boolean).map((l) => `event: ${JSON.parse(l).type}\ndata: ${l}\n\n`).join('');
  const responsesStream = readFileSync(`${FIX}/openai-responses/text.chunks.txt`, 'utf8').split('\n').filter(Boolean).map((l) => `event: ${JSON.parse(l).type}\ndata: ${l}\n\n`).join('');
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      bodies.push({ path: req.url, body: JSON.parse(raw) });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(req.url!.endsWith('/messages') ? anthropicStream : responsesStream);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, server };
}

/** A second gateway configured as a user would (a GATEWAY_CONFIG file) with vendor A and vendor C
 *  at the capturing upstream, served as managed; `post` sends with an organization's key. */
async function captureGateway(): Promise<{ cap: Awaited<ReturnType<typeof captureUpstream>>; post: typeof post; close(): Promise<void> }> {
  const cap = await captureUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'gw-config-'));
  const file = join(dir, 'gateway.json');
  writeFileSync(file, JSON.stringify({
    routes: { vendor_a: { base_url: cap.url }, vendor_c: { base_url: cap.url } },
    managed: { vendor_a: { key: 'upstream-key-a' }, vendor_c: { key: 'upstream-key-c' } },
  }));
  const gw = await startTestGateway({ file });
  const orgKey = (await gw.newOrg({ balance: 100_000_000 })).key;
  return {
    cap,
    post: (path, body, headers = {}) => fetch(gw.url + path, {
      method: 'POST', headers: { authorization: `Bearer ${orgKey}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
    }),
    async close() { await gw.close(); cap.server.close(); rmSync(dir, { recursive: true, force: true }); },
  };
}

test('Messages: max_tokens is forwarded when set and never synthesised; vendor C native fields pass through', async () => {
  const { cap, post, close } = await captureGateway();
  try {
    await post('/v1/messages', { model: 'claude-haiku-4-5', messages: msg('hi'), start_within: 'now' }).then((r) => r.text());
    assert.equal(cap.bodies[0].body.max_tokens, undefined, 'no default max_tokens for a Messages caller');
    await post('/v1/messages', { model: 'claude-haiku-4-5', messages: msg('hi'), max_tokens: 77, top_k: 5, stop_sequences: ['END'], system: [{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }], start_within: 'now' }).then((r) => r.text());
    const b = cap.bodies[1].body;
    assert.equal(b.max_tokens, 77);
    assert.equal(b.top_k, 5);
    assert.deepEqual(b.stop_sequences, ['END']);
    assert.deepEqual(b.system[0].cache_control, { type: 'ephemeral' });
    assert.equal(b.start_within, undefined, 'gateway fields are removed');
    // Another format translated to vendor C gets the configured cap (the API requires one).
    await post('/v1/responses', { model: 'claude-haiku-4-5', input: 'hi', start_within: 'now' }).then((r) => r.text());
    assert.equal(cap.bodies[2].body.max_tokens, 4096);
  } finally { await close(); }
});

test('Messages: base64 document blocks become the target\'s file input on vendor A', async () => {
  const { cap, post, close } = await captureGateway();
  try {
    const pdf = Buffer.from('%PDF-1.4 test').toString('base64');
    const res = await post('/v1/messages', { model: 'gpt-5.4-mini', max_tokens: 50, start_within: 'now', messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }, { type: 'text', text: 'summarise' }] }] });
    assert.equal(res.status, 200, await res.text());
    const input = cap.bodies[0].body.input;
    const parts = input.flatMap((it: any) => it.content ?? []);
    const file = parts.find((p: any) => p.type === 'input_file');
    assert.ok(file, JSON.stringify(input));
    assert.match(file.file_data, /^data:application\/pdf;base64,/);
  } finally { await close(); }
});

test('Messages: a base64 file block reaches vendor A and vendor B as the document block does', async () => {
  const org = await t.newOrg({ ownKeys: ['vendor_a', 'vendor_b'] });
  const upstream = recordUpstreamBodies(t, ['vendor_a', 'vendor_b']);
  const pdf = Buffer.from('%PDF-1.4 test').toString('base64');
  const sent = async (model: string, route: 'vendor_a' | 'vendor_b', type: string): Promise<any[]> => {
    const content = [{ type, source: { type: 'base64', media_type: 'application/pdf', data: pdf } }, { type: 'text', text: `summarise ${sim({ output_tokens: 2 })}` }];
    const res = await fetch(`${t.url}/v1/messages`, {
      method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, max_tokens: 50, start_within: 'now', messages: [{ role: 'user', content }] }),
    });
    assert.equal(res.status, 200, await res.text());
    return upstream.last(route).input;
  };
  const a = await sent('gpt-5.4-mini', 'vendor_a', 'file');
  const fileA = a.flatMap((item: any) => item.content ?? []).find((p: any) => p.type === 'input_file');
  assert.equal(fileA?.file_data, `data:application/pdf;base64,${pdf}`, JSON.stringify(a));
  assert.deepEqual(a, await sent('gpt-5.4-mini', 'vendor_a', 'document'));
  const b = await sent('gemini-3.5-flash', 'vendor_b', 'file');
  const fileB = b.flatMap((step: any) => step.content ?? []).find((p: any) => p.data === pdf);
  assert.equal(fileB?.mime_type, 'application/pdf', JSON.stringify(b));
  assert.deepEqual(b, await sent('gemini-3.5-flash', 'vendor_b', 'document'));
});

test('Messages: vendor C native fields on other models → 400 unsupported_parameter', async () => {
  await anthropicError(m({ model: 'gpt-5.4-mini', messages: msg('x'), start_within: 'now', top_k: 3 }), 400, 'unsupported_parameter');
  await anthropicError(m({ model: 'gemini-3.5-flash', messages: msg('x'), start_within: 'now', stop_sequences: ['x'] }), 400, 'unsupported_parameter');
  await anthropicError(m({ model: 'gpt-5.4-mini', start_within: 'now', messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] }] }), 400, 'unsupported_parameter');
  await anthropicError(m({ model: 'gpt-5.4-mini', start_within: 'now', messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://x/y.pdf' }, citations: { enabled: true } }] }] }), 400, 'unsupported_parameter');
  // The same inside a tool_result's content, where the translation would drop it.
  const withResult = (block: Record<string, unknown>) => [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [block] }] },
  ];
  const tools = [{ name: 'f', input_schema: { type: 'object' } }];
  await anthropicError(m({ model: 'gpt-5.4-mini', start_within: 'now', tools, messages: withResult({ type: 'text', text: 'r', cache_control: { type: 'ephemeral' } }) }), 400, 'unsupported_parameter');
  await anthropicError(m({ model: 'gemini-3.5-flash', start_within: 'now', tools, messages: withResult({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'r' } }) }), 400, 'unsupported_parameter');
});

test('Messages: a PDF by URL reaches the routes that fetch one (OpenAI file_url, Gemini uri); another non-base64 document source off vendor C is refused naming it', async () => {
  const org = await t.newOrg({ ownKeys: ['vendor_a', 'vendor_b'] });
  const upstream = recordUpstreamBodies(t, ['vendor_a', 'vendor_b']);
  const url = 'https://example.com/paper.pdf';
  const ask = (model: string, source: Record<string, unknown>) => fetch(`${t.url}/v1/messages`, {
    method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 50, start_within: 'now', messages: [{ role: 'user', content: [{ type: 'document', source, title: 'paper.pdf' }, { type: 'text', text: `summarise ${sim({ output_tokens: 2 })}` }] }] }),
  });
  const a = await ask('gpt-5.4-mini', { type: 'url', url });
  assert.equal(a.status, 200, await a.text());
  const fileA = upstream.last('vendor_a').input.flatMap((item: any) => item.content ?? []).find((p: any) => p.type === 'input_file');
  assert.deepEqual(fileA, { type: 'input_file', file_url: url, filename: 'paper.pdf' });
  const b = await ask('gemini-3.5-flash', { type: 'url', url });
  assert.equal(b.status, 200, await b.text());
  assert.ok(JSON.stringify(upstream.last('vendor_b')).includes(url), JSON.stringify(upstream.last('vendor_b')));
  const text = await ask('gpt-5.4-mini', { type: 'text', media_type: 'text/plain', data: 'notes' });
  assert.equal(text.status, 400);
  const err = ((await text.json()) as any).error;
  assert.deepEqual([err.code, err.message], ['unsupported_parameter', 'A \'document\' with a "text" source is only supported on vendor C models.']);
});

test('Messages: output_config on a non-family model → 400 unsupported_parameter naming output_config', async () => {
  const res = await post('/v1/messages', { model: 'gpt-5.4-mini', max_tokens: 10, messages: msg('x'), start_within: 'now', output_config: { effort: 'low' } });
  assert.equal(res.status, 400);
  const body = await res.json();
  assert.equal(body.type, 'error');
  assert.equal(body.error.code, 'unsupported_parameter');
  assert.match(body.error.message, /output_config/);
});

test('Messages: experimental beta headers and fields → 400', async () => {
  const r1 = await post('/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 10, messages: msg('x'), start_within: 'now' }, { 'anthropic-beta': 'context-management-2025-06-27' });
  assert.equal(r1.status, 400);
  assert.equal((await r1.json()).error.code, 'beta_not_supported');
  await anthropicError(m({ model: 'claude-haiku-4-5', messages: msg('x'), start_within: 'now', mcp_servers: [] }), 400, 'beta_not_supported');
});

test('Messages and Interactions: service_tier → 400 service_tier_not_allowed', async () => {
  await anthropicError(m({ model: 'claude-haiku-4-5', messages: msg('x'), start_within: 'now', service_tier: 'auto' }), 400, 'service_tier_not_allowed');
  await genaiError(i({ model: 'gemini-3.5-flash', input: 'x', start_within: 'now', service_tier: 'flex' }), 400, 'service_tier_not_allowed');
});

test('Messages: x-api-key alone → 401 missing_api_key in the Anthropic envelope', async () => {
  // (@anthropic-ai/sdk 1.x sends its key as a Bearer token, which the gateway accepts.)
  const res = await fetch(`${t.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 10, messages: msg('x'), start_within: 'now' }) });
  assert.equal(res.status, 401);
  const body = await res.json();
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, 'authentication_error');
  assert.equal(body.error.code, 'missing_api_key');
});

test('Messages: a duration on vendor C models → flex_unsupported_for_vendor_c; missing start_within → missing_start_within', async () => {
  await anthropicError(m({ model: 'claude-haiku-4-5', messages: msg('x'), start_within: '00h-00m-10s' }), 400, 'flex_unsupported_for_vendor_c');
  await anthropicError(m({ model: 'claude-haiku-4-5', messages: msg('x') }), 400, 'missing_start_within');
});

test('Messages: stop_reason max_tokens and usage.service_tier flex when vendor A\'s flex tier served', async () => {
  const r: any = await m({ model: 'gpt-5.4', max_tokens: 3, messages: msg(`go ${sim({ output_tokens: 20, flex_start_ms: 0 })}`), start_within: '00h-00m-30s' });
  assert.equal(r.stop_reason, 'max_tokens');
  assert.equal(r.usage.service_tier, 'flex');
});

test('Messages: a refusal keeps stop_reason refusal (stream replayed on vendor C)', async () => {
  const r: any = await anthropic.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 100, messages: msg(sim({ replay: 'anthropic-messages/refusal.chunks.txt' })), start_within: 'now' } as any).finalMessage();
  assert.equal(r.stop_reason, 'refusal');
});

test('Interactions: generation_config extras pass on vendor B models and fail elsewhere; thinking_level maps to reasoning', async () => {
  const ok = await i({ model: 'gemini-3.5-flash', input: 'x', start_within: 'now', generation_config: { seed: 7, thinking_level: 'low' } });
  assert.equal(ok.status, 'completed');
  assert.ok(ok.steps.some((s: any) => s.type === 'thought'), 'thinking_level asked for reasoning');
  await genaiError(i({ model: 'gpt-5.4-mini', input: 'x', start_within: 'now', generation_config: { seed: 7 } }), 400, 'unsupported_generation_config');
  const mapped = await i({ model: 'claude-haiku-4-5', input: 'x', start_within: 'now', generation_config: { thinking_level: 'high', max_output_tokens: 4000 } });
  assert.ok(mapped.steps.some((s: any) => s.type === 'thought'));
});

test('Interactions: status requires_action, incomplete and completed', async () => {
  const tools = [{ type: 'function', name: 'f', parameters: { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] } }];
  assert.equal((await i({ model: 'gpt-5.4-mini', input: `x ${sim({ tool_call: 'f' })}`, tools, start_within: 'now' })).status, 'requires_action');
  assert.equal((await i({ model: 'claude-haiku-4-5', input: `x ${sim({ output_tokens: 30 })}`, generation_config: { max_output_tokens: 5 }, start_within: 'now' })).status, 'incomplete');
  assert.equal((await i({ model: 'gemini-3.5-flash', input: 'x', start_within: 'now' })).status, 'completed');
});

test('Interactions: a mid-stream upstream error → status failed / an error event the SDK raises', async () => {
  const s = await i({ model: 'gpt-5.4-mini', input: sim({ output_tokens: 30, error_after_tokens: 3 }), start_within: 'now', stream: true });
  let failed = false;
  try {
    for await (const ev of s) if (ev.event_type === 'error' || (ev.event_type === 'interaction.completed' && ev.interaction.status === 'failed')) failed = true;
  } catch { failed = true; }
  assert.ok(failed);
});

test('replays: the gateway forwards vendor C and vendor B streams byte for byte', async () => {
  const anth = readFileSync(`${FIX}/anthropic-messages/text.chunks.txt`, 'utf8').split('\n').filter(Boolean);
  const r1 = await post('/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 100, stream: true, start_within: 'now', messages: msg(sim({ replay: 'anthropic-messages/text.chunks.txt' })) });
  assert.equal(await r1.text(), anth.map((l) => `event: ${JSON.parse(l).type}\ndata: ${l}\n\n`).join(''));
  const gem = readFileSync(`${FIX}/gemini-interactions/text.chunks.txt`, 'utf8').split('\n').filter(Boolean);
  const r2 = await post('/v1/interactions', { model: 'gemini-3.5-flash', stream: true, start_within: 'now', input: sim({ replay: 'gemini-interactions/text.chunks.txt' }) });
  assert.equal(await r2.text(), gem.map((l) => `event: ${JSON.parse(l).event_type}\ndata: ${l}\n\n`).join('') + 'event: done\ndata: [DONE]\n\n');
});

test('replays across formats: recorded Gemini steps and a recorded Vertex stream reach OpenAI callers intact', recordedOnly, async () => {
  // The recordings of real traffic: a gateway whose simulator replays from ../shared.
  const rt = await startTestGateway({ config: { simulator: { fixturesDir: RECORDED } } });
  try {
    const openai = new OpenAI({ apiKey: (await rt.newOrg({ balance: 100_000_000 })).key, baseURL: `${rt.url}/v1`, maxRetries: 0 });
    await crossFormatReplays(openai);
  } finally { await rt.close(); }
});

async function crossFormatReplays(openai: OpenAI): Promise<void> {
  const r: any = await openai.responses.create({ model: 'gemini-3.5-flash', input: sim({ replay: 'gemini-interactions/tool-call-step1.chunks.txt' }), start_within: 'now', tools: [{ type: 'function', name: 'getWeather', parameters: { type: 'object', properties: {} } }] } as any);
  const call = r.output.find((o: any) => o.type === 'function_call');
  const recorded = readFileSync(`${RECORDED}/gemini-interactions/tool-call-step1.chunks.txt`, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.equal(call.name, recorded.find((e) => e.step?.type === 'function_call').step.name);
  assert.equal(call.arguments, recorded.filter((e) => e.delta?.type === 'arguments_delta').map((e) => e.delta.arguments).join(''));
  const stream: any = await openai.chat.completions.create({ model: 'gemini-3.1-pro-preview', provider: ['cloud_a'], messages: [{ role: 'user', content: sim({ replay: 'gemini-vertex/google-vertex-stream-tool-call-arguments-nested.1.chunks.txt' }) }], start_within: 'now', stream: true, stream_options: { include_usage: true } } as any);
  let args = '';
  let name = '';
  let usage: any;
  for await (const c of stream) {
    for (const tc of c.choices[0]?.delta?.tool_calls ?? []) { name ||= tc.function?.name ?? ''; args += tc.function?.arguments ?? ''; }
    if (c.usage) usage = c.usage;
  }
  assert.equal(name, 'cookRecipe');
  assert.equal(typeof JSON.parse(args), 'object');
  assert.equal(usage.prompt_tokens, 31);
  assert.equal(usage.completion_tokens, 684 + 1026, 'thought tokens count as output');
}

test('fallback: vendor_b fails, cloud_a serves at the standard tier (x-service-routing-reason fallback)', async () => {
  const { data, response } = await openai.responses.create({ model: 'gemini-3.5-flash', input: sim({ fail: [500], id: 'fb-1' }), start_within: 'now', provider: ['vendor_b', 'cloud_a'], include_cost: true } as any).withResponse();
  assert.equal(response.headers.get('x-service-served-provider'), 'cloud_a');
  assert.equal(response.headers.get('x-service-routing-reason'), 'fallback');
  assert.equal(response.headers.get('x-service-flex-reason'), 'fallback');
  const routing = (data as any).usage.routing;
  assert.deepEqual({ ...routing }, { provider: 'cloud_a', requested_provider: 'vendor_b', tier: 'standard', reason: 'fallback', fallback_attempts: 1, mode: 'managed' });
});
