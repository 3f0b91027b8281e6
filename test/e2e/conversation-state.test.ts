// Provider-held conversation state (Responses previous_response_id / conversation, Interactions
// previous_interaction_id) is pinned to the route that issued it: no fallback or other route, the
// reason `pinned`; a model or chain that cannot run there is refused. The simulator keeps what it
// stored, so an id it never issued (or issued with store:false) gets the API's 404.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
let openai: OpenAI;
let key: string;

before(async () => {
  t = await startTestGateway();
  key = (await t.newOrg({ balance: 100_000_000 })).key;
  openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
});
after(() => t.close());

const post = (path: string, body: unknown) => fetch(`${t.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

for (const stream of [false, true]) {
  test(`Responses previous_response_id (${stream ? 'streamed' : 'non-streamed'}): the follow-up runs on the issuing route, reason pinned`, async () => {
    const first: any = await openai.responses.create({ model: 'gpt-5.4', input: 'Remember the number 7.', start_within: '00h-00m-30s' } as any);
    assert.match(first.id, /^resp_/);
    const body = { model: 'gpt-5.4', input: 'Which number?', previous_response_id: first.id, start_within: '00h-00m-30s', stream };
    const r = await post('/v1/responses', body);
    assert.equal(r.status, 200, await r.clone().text());
    assert.equal(r.headers.get('x-service-routing-reason'), 'pinned');
    assert.equal(r.headers.get('x-service-served-provider'), 'vendor_a');
    await r.text();   // a 200 at all: the simulator found the stored response (else the API's 404)
  });
}

test('an id the provider never issued, or stored with store:false, gets the API\'s 404', async () => {
  await assert.rejects(openai.responses.create({ model: 'gpt-5.4', input: 'x', previous_response_id: 'resp_never_issued', start_within: 'now' } as any),
    (e: any) => e.status === 404 && /Previous response with id 'resp_never_issued' not found/.test(e.message));
  const unstored: any = await openai.responses.create({ model: 'gpt-5.4', input: 'x', store: false, start_within: 'now' } as any);
  await assert.rejects(openai.responses.create({ model: 'gpt-5.4', input: 'y', previous_response_id: unstored.id, start_within: 'now' } as any),
    (e: any) => e.status === 404);
});

test('state on a model or chain that cannot run on the issuing route: 400 conversation_state_unroutable, naming the field', async () => {
  for (const model of ['gemini-3.5-flash', 'claude-haiku-4-5']) {
    const r = await post('/v1/responses', { model, input: 'x', previous_response_id: 'resp_1', start_within: 'now' });
    assert.equal(r.status, 400);
    const e = (await r.json()).error;
    assert.equal(e.code, 'conversation_state_unroutable');
    assert.equal(e.param, 'previous_response_id');
  }
  const r = await post('/v1/interactions', { model: 'gemini-3.5-flash', input: 'x', previous_interaction_id: 'v1_1', provider: ['cloud_a', 'vendor_b'], start_within: 'now' });
  assert.equal(r.status, 400);
  assert.equal((await r.json()).error.code, 'conversation_state_unroutable');
});

test('Interactions previous_interaction_id: pinned to vendor_b, the fallback chain dropped; unknown ids 404', async () => {
  const first = await (await post('/v1/interactions', { model: 'gemini-3.5-flash', input: 'Remember 7.', start_within: 'now' })).json();
  assert.match(first.id, /^v1_/);
  const r = await post('/v1/interactions', { model: 'gemini-3.5-flash', input: 'Which?', previous_interaction_id: first.id, provider: ['vendor_b', 'cloud_a'], start_within: '00h-00m-30s' });
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal(r.headers.get('x-service-routing-reason'), 'pinned');
  assert.equal(r.headers.get('x-service-served-provider'), 'vendor_b');
  const missing = await post('/v1/interactions', { model: 'gemini-3.5-flash', input: 'Which?', previous_interaction_id: 'v1_never', start_within: 'now' });
  assert.equal(missing.status, 404);
});
