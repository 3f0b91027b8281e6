// cloud_a, Gemini on Vertex AI (generateContent / streamGenerateContent?alt=sse) and the OAuth2
// token endpoint that issues its Bearer tokens.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { JWT } from 'google-auth-library';
import { Gaxios } from 'gaxios';
import type { Simulator } from '../../lib/simulator/server.ts';
import { assertSatisfies, directive, fakeJwt, parseSSE, start, vertexToken } from './helpers.ts';

const MODEL_PATH = '/v1/projects/p1/locations/global/publishers/google/models/gemini-sim';

let sim: Simulator;
let token: string;
before(async () => {
  sim = await start();
  token = await vertexToken(sim);
});
after(() => sim.close());

function call(verb: string, body: object, headers: Record<string, string> = {}) {
  const suffix = verb === 'streamGenerateContent' ? '?alt=sse' : '';
  return fetch(`${sim.url}${MODEL_PATH}:${verb}${suffix}`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  });
}
const user = (text: string) => ({ contents: [{ role: 'user', parts: [{ text }] }] });

test('token endpoint: JWT-bearer grant → sim- token; malformed JWT and other grants refused', async () => {
  assert.match(token, /^sim-/);
  const form = (grant: string, assertion: string) => fetch(`${sim.url}/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: grant, assertion }),
  });
  const ok = await form('urn:ietf:params:oauth:grant-type:jwt-bearer', fakeJwt());
  assert.deepEqual(Object.keys(await ok.json() as object).sort(), ['access_token', 'expires_in', 'token_type']);
  assert.equal((await form('urn:ietf:params:oauth:grant-type:jwt-bearer', 'a.b')).status, 400);
  assert.equal((await form('client_credentials', fakeJwt())).status, 400);
});

test('google-auth-library JWT client obtains a token from /token (signed RS256 assertion)', async () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const transporter = new Gaxios();
  // Point the library's fixed Google token URL at the simulator.
  transporter.interceptors.request.add({
    resolved: async (cfg) => (String(cfg.url) === 'https://oauth2.googleapis.com/token' ? { ...cfg, url: new URL(`${sim.url}/token`) } : cfg),
  });
  const client = new JWT({
    email: 'sa@sim.iam.gserviceaccount.com', key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    scopes: ['https://www.googleapis.com/auth/cloud-platform'], transporter: transporter as never,
  });
  const { token: issued } = await client.getAccessToken();
  assert.match(issued ?? '', /^sim-/);
  assert.equal((await fetch(`${sim.url}${MODEL_PATH}:generateContent`, {
    method: 'POST', headers: { authorization: `Bearer ${issued}` }, body: JSON.stringify(user('x')),
  })).status, 200);
});

test('stream: data-only GenerateContentResponse chunks, no terminator, last has STOP + full usage', async () => {
  const res = await call('streamGenerateContent', user('Write a line'));
  assert.equal(res.status, 200);
  const body = await res.text();
  assert.ok(!body.includes('event:') && !body.includes('[DONE]'));
  const chunks = parseSSE(body).map((f) => JSON.parse(f.data) as Record<string, any>);
  assert.equal(chunks.length, 16);
  let text = '';
  for (const c of chunks) {
    assert.equal(c.candidates[0].content.role, 'model');
    assert.equal(c.candidates[0].index, 0);
    assert.equal(c.modelVersion, 'gemini-sim');
    assert.equal(c.responseId, chunks[0]!.responseId);
    assert.ok(c.usageMetadata);
    text += c.candidates[0].content.parts.map((p: { text: string }) => p.text).join('');
  }
  const last = chunks.at(-1)!;
  assert.equal(last.candidates[0].finishReason, 'STOP');
  assert.equal(chunks[0]!.candidates[0].finishReason, undefined);
  const u = last.usageMetadata;
  assert.equal(u.candidatesTokenCount, 16);
  assert.equal(u.promptTokenCount, Math.ceil('Write a line'.length / 4));
  assert.equal(u.thoughtsTokenCount, 0);
  assert.equal(u.cachedContentTokenCount, 0);
  assert.equal(u.totalTokenCount, u.promptTokenCount + 16);
  assert.equal(u.trafficType, 'ON_DEMAND');
  assert.equal(text.split(' ').length, 16);
});

test('non-stream with thinking: a thought part with thoughtSignature, thoughts counted apart', async () => {
  const res = await call('generateContent', { ...user('why'), generationConfig: { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } } });
  const body = await res.json() as Record<string, any>;
  const parts = body.candidates[0].content.parts;
  assert.equal(parts[0].thought, true);
  assert.ok(parts[0].thoughtSignature);
  assert.equal(parts[1].text.split(' ').length, 16);
  assert.equal(body.usageMetadata.thoughtsTokenCount, 16);
  assert.equal(body.usageMetadata.candidatesTokenCount, 16);
  assert.equal(body.usageMetadata.totalTokenCount, body.usageMetadata.promptTokenCount + 32);
});

test('mode ANY: one functionCall part with schema-valid args (OpenAPI-style upper-case types), STOP', async () => {
  const parameters = {
    type: 'OBJECT',
    properties: { city: { type: 'STRING' }, days: { type: 'INTEGER', minimum: 1, maximum: 3 }, metric: { type: 'BOOLEAN' } },
    required: ['city', 'days'],
  };
  const res = await call('streamGenerateContent', {
    ...user('weather'), tools: [{ functionDeclarations: [{ name: 'forecast', parameters }] }],
    toolConfig: { functionCallingConfig: { mode: 'ANY' } },
  });
  const chunks = parseSSE(await res.text()).map((f) => JSON.parse(f.data) as Record<string, any>);
  const fc = chunks.flatMap((c) => c.candidates[0].content.parts).find((p: Record<string, any>) => p.functionCall).functionCall;
  assert.equal(fc.name, 'forecast');
  assertSatisfies(JSON.parse(JSON.stringify(parameters).toLowerCase()), fc.args);
  assert.equal(chunks.at(-1)!.candidates[0].finishReason, 'STOP');
});

test('maxOutputTokens → MAX_TOKENS; flex header → ON_DEMAND_FLEX; flex refusal → 429 RESOURCE_EXHAUSTED; bad token → 401', async () => {
  const cut = await (await call('generateContent', { ...user('x'), generationConfig: { maxOutputTokens: 2 } })).json() as Record<string, any>;
  assert.equal(cut.candidates[0].finishReason, 'MAX_TOKENS');
  assert.equal(cut.usageMetadata.candidatesTokenCount, 2);

  const flex = await (await call('generateContent', user('x'), { 'X-Vertex-AI-LLM-Shared-Request-Type': 'flex' })).json() as Record<string, any>;
  assert.equal(flex.usageMetadata.trafficType, 'ON_DEMAND_FLEX');

  const refused = await call('generateContent', user(`x ${directive({ flex_refuse: true, retry_after_s: 2 })}`), { 'X-Vertex-AI-LLM-Shared-Request-Type': 'flex' });
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '2');
  const err = await refused.json() as { error: { code: number; status: string } };
  assert.equal(err.error.status, 'RESOURCE_EXHAUSTED');

  const bad = await fetch(`${sim.url}${MODEL_PATH}:generateContent`, {
    method: 'POST', headers: { authorization: 'Bearer not-issued' }, body: JSON.stringify(user('x')),
  });
  assert.equal(bad.status, 401);
  assert.equal((await bad.json() as { error: { status: string } }).error.status, 'UNAUTHENTICATED');
});

test('thinkingConfig by generation, as Vertex answers: a level on gemini-2.5 400, a budget past its ceiling 400, any on gemini-2.0 400', async () => {
  const ask = (model: string, thinkingConfig: object) => fetch(`${sim.url}${MODEL_PATH.replace('gemini-sim', model)}:generateContent`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...user('why'), generationConfig: { thinkingConfig } }),
  });
  const refusal = async (res: Response) => {
    assert.equal(res.status, 400);
    const body = await res.json() as Record<string, any>;
    assert.equal(body.error.status, 'INVALID_ARGUMENT');
    return body.error.message as string;
  };
  assert.equal(await refusal(await ask('gemini-2.5-flash', { thinkingLevel: 'LOW', includeThoughts: true })), 'Thinking level is not supported for this model.');
  assert.match(await refusal(await ask('gemini-2.5-flash', { thinkingBudget: 24_577 })), /thinking_budget is out of range; supported values are integers from 1 to 24576/);
  assert.match(await refusal(await ask('gemini-2.0-flash', { thinkingBudget: 1024 })), /thinking is not supported by this model/);
  for (const [model, thinkingConfig] of [
    ['gemini-2.5-flash', { thinkingBudget: 24_576 }], ['gemini-2.5-flash', { thinkingBudget: -1 }], ['gemini-2.5-flash', { thinkingBudget: 0 }],
    ['gemini-2.5-pro', { thinkingBudget: 32_768 }], ['gemini-3.5-flash', { thinkingLevel: 'HIGH' }], ['gemini-3.5-flash', { thinkingBudget: 2048 }],
    ['gemini-2.0-flash', {}],
  ] as const) {
    const res = await ask(model, thinkingConfig);
    assert.equal(res.status, model === 'gemini-2.0-flash' ? 400 : 200, `${model} ${JSON.stringify(thinkingConfig)}`);
    await res.body?.cancel();
  }
});

test('a content answering a function call turn with another number of functionResponse parts than calls: 400, as Gemini answers', async () => {
  const fc = (city: string) => ({ functionCall: { name: 'get_weather', args: { city } } });
  const fr = (result: string) => ({ functionResponse: { name: 'get_weather', response: { result } } });
  const ask = (responses: object[]) => call('generateContent', { contents: [
    { role: 'user', parts: [{ text: 'Paris and London?' }] }, { role: 'model', parts: [fc('Paris'), fc('London')] }, { role: 'user', parts: responses },
  ] });
  const short = await ask([fr('sun')]);
  assert.equal(short.status, 400);
  const body = await short.json() as Record<string, any>;
  assert.equal(body.error.status, 'INVALID_ARGUMENT');
  assert.match(body.error.message, /number of function response parts is equal to the number of function call parts/);
  assert.equal((await ask([fr('sun'), fr('rain'), fr('extra')])).status, 400);
  const paired = await ask([fr('sun'), fr('rain')]);
  assert.equal(paired.status, 200);
  await paired.body?.cancel();
});
