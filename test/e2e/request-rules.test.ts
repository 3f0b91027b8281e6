// One test per request rule of the spec that applies to vendor A models, through real sockets,
// each asserting the status and the spec's code as the official openai SDK exposes it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordUpstreamBodies } from '../helpers/upstream-bodies.ts';

let t: TestGateway;
let client: OpenAI;
let key: string;

before(async () => {
  // vendor_b is not served managed here, so a route without the org's own key is a 400.
  t = await startTestGateway({ config: { managed: { vendor_a: { key: 'x' }, vendor_c: { key: 'x' }, cloud_a: { key: 'x' }, cloud_b: { key: 'x' } } } });
  const org = await t.newOrg({ ownKeys: ['vendor_a'] });
  key = org.key;
  client = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
});
after(() => t.close());

async function expectError(p: Promise<unknown>, status: number, code: string, param?: string): Promise<void> {
  await assert.rejects(p, (err: any) => {
    assert.ok(err instanceof OpenAI.APIError, `an APIError, got ${err}`);
    assert.equal(err.status, status);
    assert.equal(err.code, code);
    if (param) assert.equal(err.param, param);
    // Every answer of an inference endpoint names its request, a refusal before authentication too.
    const id = typeof err.headers?.get === 'function' ? err.headers.get('x-request-id') : err.headers?.['x-request-id'];
    assert.match(String(id), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, `x-request-id on ${status} ${code}`);
    return true;
  });
}

const responses = (body: Record<string, unknown>) => client.responses.create({ model: 'gpt-5.4-mini', input: 'hi', ...body } as any);
const chat = (body: Record<string, unknown>) => client.chat.completions.create({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }], ...body } as any);

test('missing start_within → 400 missing_start_within (Responses and Chat)', async () => {
  await expectError(responses({}), 400, 'missing_start_within');
  await expectError(chat({}), 400, 'missing_start_within');
});

test('malformed start_within → 400 invalid_start_within', async () => {
  for (const v of ['5s', '00h-00m-5s', '00h-60m-00s', 'soon', 30, null, true, {}]) await expectError(responses({ start_within: v }), 400, 'invalid_start_within');
});

test('start_within over 10 minutes → 400 invalid_start_within; exactly 10 minutes is accepted', async () => {
  await expectError(responses({ start_within: '00h-10m-01s' }), 400, 'invalid_start_within');
  await expectError(responses({ start_within: '01h-00m-00s' }), 400, 'invalid_start_within');
  const ok = await responses({ start_within: '00h-10m-00s', input: '#sim{"flex_start_ms":0}' });
  assert.equal((ok as any).status, 'completed');
});

test('a key default start_within applies when the body has none (agent key)', async () => {
  const org = await t.newOrg({ ownKeys: ['vendor_a'], defaultStartWithin: '00h-00m-30s' });
  const agent = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const { response } = await agent.responses.create({ model: 'gpt-5.4-mini', input: '#sim{"flex_start_ms":0}' } as any).withResponse();
  assert.equal(response.headers.get('x-service-flex-reason'), 'flex_committed');
});

test('invalid provider arrays → 400 invalid_provider_chain', async () => {
  for (const p of [[], 'vendor_a', ['vendor_x'], ['vendor_a', 'vendor_a'], [1]]) {
    await expectError(responses({ start_within: 'now', provider: p }), 400, 'invalid_provider_chain', 'provider');
  }
});

test('a route that cannot serve the model → 400 provider_model_mismatch', async () => {
  await expectError(responses({ start_within: 'now', provider: ['vendor_b'] }), 400, 'provider_model_mismatch');
  await expectError(responses({ start_within: 'now', provider: ['vendor_a', 'cloud_b'] }), 400, 'provider_model_mismatch');
});

test('a duration for a model that cannot flex → 400 flex_model_not_capable; "now" works', async () => {
  await expectError(responses({ model: 'gpt-5.4-nano', start_within: '00h-00m-10s' }), 400, 'flex_model_not_capable');
  const ok: any = await responses({ model: 'gpt-5.4-nano', start_within: 'now' });
  assert.equal(ok.status, 'completed');
});

test('a duration on vendor C models → flex_unsupported_for_vendor_c; cloud first → flex_unsupported_on_cloud', async () => {
  await expectError(responses({ model: 'claude-haiku-4-5', start_within: '00h-00m-10s' }), 400, 'flex_unsupported_for_vendor_c');
  await expectError(responses({ model: 'gemini-3.5-flash', start_within: '00h-00m-10s', provider: ['cloud_a'] }), 400, 'flex_unsupported_on_cloud');
  await expectError(responses({ model: 'claude-haiku-4-5', start_within: '00h-00m-10s', provider: ['cloud_b'] }), 400, 'flex_unsupported_on_cloud');
});

test('a named route without a key → 400 provider_key_missing, never a fall-through', async () => {
  await expectError(responses({ model: 'gemini-3.5-flash', start_within: 'now', provider: ['vendor_b', 'cloud_a'] }), 400, 'provider_key_missing', 'provider');
  await expectError(responses({ model: 'gemini-3.5-flash', start_within: 'now', provider: ['cloud_a', 'vendor_b'] }), 400, 'provider_key_missing', 'provider');
});

test('retry outside its ranges → 400 invalid_retry', async () => {
  for (const r of [{ count: 0 }, { count: 6 }, { count: 1.5 }, { count: 2, backoff: 'fibonacci' }, { count: 2, jitter: 'yes' }, { count: 2, extra: 1 }, 3]) {
    await expectError(responses({ start_within: 'now', retry: r }), 400, 'invalid_retry', 'retry');
  }
});

test('Chat n > 1 → 400 unsupported_value', async () => {
  await expectError(chat({ start_within: 'now', n: 2 }), 400, 'unsupported_value', 'n');
});

test('Chat-native parameters: vendor B/C model → unsupported_parameter; with a duration → unsupported_parameter', async () => {
  await expectError(chat({ model: 'gemini-3.5-flash', start_within: 'now', seed: 3 }), 400, 'unsupported_parameter', 'seed');
  await expectError(chat({ model: 'claude-haiku-4-5', start_within: 'now', logit_bias: { '1': 2 } }), 400, 'unsupported_parameter', 'logit_bias');
  await expectError(chat({ start_within: '00h-00m-10s', presence_penalty: 0.5 }), 400, 'unsupported_parameter', 'presence_penalty');
  // A null or text-only value is not "a real value".
  const ok = await chat({ start_within: '00h-00m-10s', seed: null, modalities: ['text'], messages: [{ role: 'user', content: '#sim{"flex_start_ms":0}' }] });
  assert.equal((ok as any).object, 'chat.completion');
});

test('Chat penalties and top_logprobs at their default 0 are not "a real value": translated, the field dropped', async () => {
  // What the OpenAI Playground's generated code sends.
  const defaults = { presence_penalty: 0, frequency_penalty: 0, top_logprobs: 0 };
  const org = await t.newOrg({ ownKeys: ['vendor_a', 'vendor_c'] });
  const own = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const messages = [{ role: 'user', content: 'hi #sim{"flex_start_ms":0,"output_tokens":2}' }];
  const claude = await own.chat.completions.create({ model: 'claude-sonnet-4-6', start_within: 'now', messages, ...defaults } as any);
  assert.equal((claude as any).object, 'chat.completion');
  const upstream = recordUpstreamBodies(t, ['vendor_a']);
  const gpt = await own.chat.completions.create({ model: 'gpt-5.4', start_within: '00h-00m-10s', messages, ...defaults } as any);
  assert.equal((gpt as any).object, 'chat.completion');
  const body = upstream.last('vendor_a');
  assert.ok(Array.isArray(body.input), 'the Responses wire, not Chat passthrough');
  for (const field of Object.keys(defaults)) assert.equal(body[field], undefined, `${field} is not forwarded to Responses`);
  // A seed of 0 is a real seed.
  await expectError(chat({ model: 'gemini-3.5-flash', start_within: 'now', seed: 0 }), 400, 'unsupported_parameter', 'seed');
});

test('Chat and Responses fields with no translation → 400 unsupported_parameter, never dropped', async () => {
  const image = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] };
  await expectError(chat({ model: 'claude-haiku-4-5', start_within: 'now', messages: [image] }), 400, 'unsupported_parameter', 'messages[0].content[0].image_url.detail');
  await expectError(chat({ model: 'gemini-3.5-flash', start_within: 'now', messages: [image] }), 400, 'unsupported_parameter', 'messages[0].content[0].image_url.detail');
  const input = [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png', detail: 'low' }] }];
  await expectError(responses({ model: 'claude-haiku-4-5', start_within: 'now', input }), 400, 'unsupported_parameter', 'input[0].content[0].detail');
  await expectError(responses({ model: 'gemini-3.5-flash', start_within: 'now', input }), 400, 'unsupported_parameter', 'input[0].content[0].detail');
  // A file's detail too (it was dropped off vendor A with a 200).
  const file = [{ role: 'user', content: [{ type: 'input_text', text: 'read' }, { type: 'input_file', file_url: 'https://x/y.pdf', detail: 'high' }] }];
  await expectError(responses({ model: 'claude-haiku-4-5', start_within: 'now', input: file }), 400, 'unsupported_parameter', 'input[0].content[1].detail');
  await expectError(chat({ start_within: 'now', functions: [{ name: 'f', parameters: {} }] }), 400, 'unsupported_parameter', 'functions');
  await expectError(chat({ start_within: 'now', tools: [{ type: 'custom', custom: { name: 'grep' } }] }), 400, 'unsupported_parameter', 'tools');
});

test('an unknown body field → 400 unsupported_parameter naming it', async () => {
  await expectError(responses({ start_within: 'now', frobnicate: true }), 400, 'unsupported_parameter', 'frobnicate');
});

test('malformed JSON → 400 invalid_json; unknown model → 404 model_not_found', async () => {
  const res = await fetch(`${t.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: '{"model":' });
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.code, 'invalid_json');
  await expectError(responses({ model: 'gpt-9', start_within: 'now' }), 404, 'model_not_found');
});

test('x-api-key alone → 401 missing_api_key; wrong or revoked key → 401 invalid_api_key', async () => {
  const r1 = await fetch(`${t.url}/v1/responses`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{}' });
  assert.equal(r1.status, 401);
  assert.equal((await r1.json()).error.code, 'missing_api_key');
  const wrong = new OpenAI({ apiKey: 'flex_live_wrong', baseURL: `${t.url}/v1`, maxRetries: 0 });
  await expectError(wrong.responses.create({ model: 'gpt-5.4-mini', input: 'x', start_within: 'now' } as any), 401, 'invalid_api_key');
  const org = await t.newOrg({ ownKeys: ['vendor_a'] });
  assert.equal((await t.admin('DELETE', `/admin/v1/keys/${org.keyId}`)).status, 200);
  const revoked = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  await expectError(revoked.responses.create({ model: 'gpt-5.4-mini', input: 'x', start_within: 'now' } as any), 401, 'invalid_api_key');
});

test('a body over 50,000,000 bytes → 413 request_too_large, declared or streamed, and the server stays healthy', async () => {
  const declared = await new Promise<number>((resolve, reject) => {
    import('node:http').then(({ request }) => {
      const req = request(`${t.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-length': 60_000_000 } }, (res) => { res.resume(); resolve(res.statusCode!); });
      req.on('error', reject);
      req.write('{"model":"');
    });
  });
  assert.equal(declared, 413);
  const big = Buffer.alloc(50_000_001, 0x61);
  const streamed = await fetch(`${t.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: new ReadableStream({ start(c) { c.enqueue(big); c.close(); } }), duplex: 'half',
  } as any).catch((e) => e);
  if (streamed instanceof Response) {
    assert.equal(streamed.status, 413);
    assert.equal((await streamed.json()).error.code, 'request_too_large');
  }
  const health = await fetch(`${t.url}/healthz`);
  assert.equal(health.status, 200);
});
