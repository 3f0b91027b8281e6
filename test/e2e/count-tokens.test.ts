// POST /v1/messages/count_tokens through the official Anthropic SDK (messages.countTokens): counted
// by vendor C for an organization with its own vendor C key and a vendor C model, by the gateway's
// admission estimate otherwise; `counted_by` says which. Auth, errors and betas as on /v1/messages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
let own: Anthropic;
let managed: Anthropic;
let managedKey: string;

before(async () => {
  t = await startTestGateway();
  own = new Anthropic({ authToken: (await t.newOrg({ ownKeys: ['vendor_c'] })).key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  managedKey = (await t.newOrg({ balance: 1_000_000 })).key;
  managed = new Anthropic({ authToken: managedKey, apiKey: null, baseURL: t.url, maxRetries: 0 });
});
after(() => t.close());

const body = { messages: [{ role: 'user' as const, content: 'Count the tokens of this sentence, please.' }], system: 'Be brief.' };

test('vendor C model, own vendor C key: counted by vendor C (the simulator counts ⌈text / 4⌉)', async () => {
  const r: any = await own.messages.countTokens({ model: 'claude-haiku-4-5', ...body });
  assert.equal(r.counted_by, 'vendor_c');
  assert.equal(r.input_tokens, Math.ceil(('Be brief.' + body.messages[0]!.content).length / 4));
});

test('no own vendor C key, or another family: the gateway estimate (⌈body bytes / 4⌉), nothing charged', async () => {
  for (const [client, model] of [[managed, 'claude-haiku-4-5'], [own, 'gpt-5.4'], [managed, 'gemini-3.5-flash']] as const) {
    const r: any = await client.messages.countTokens({ model, ...body });
    assert.equal(r.counted_by, 'gateway_estimate', model);
    assert.equal(r.input_tokens, Math.ceil(JSON.stringify({ model, ...body }).length / 4));
  }
  const limits = await (await fetch(`${t.url}/v1/limits`, { headers: { authorization: `Bearer ${managedKey}` } })).json();
  assert.equal(limits.managed.balance.remaining_micro_usd, 1_000_000);
});

test('the spec\'s auth and errors apply, in the Messages envelope', async () => {
  const post = (headers: Record<string, string>, b: unknown) => fetch(`${t.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(b) });
  const r1 = await post({ 'x-api-key': managedKey }, { model: 'claude-haiku-4-5', ...body });
  assert.equal(r1.status, 401);
  assert.equal((await r1.json()).error.code, 'missing_api_key');
  await assert.rejects(managed.messages.countTokens({ model: 'no-such-model', ...body }), (e: any) => e.status === 404 && e.error.error.code === 'model_not_found');
  await assert.rejects(managed.messages.countTokens({ model: 'claude-haiku-4-5', ...body, max_tokens: 5 } as any), (e: any) => e.status === 400 && e.error.error.code === 'unsupported_parameter');
  await assert.rejects(managed.messages.countTokens({ model: 'claude-haiku-4-5', ...body }, { headers: { 'anthropic-beta': 'context-management-2025-06-27' } }),
    (e: any) => e.status === 400 && e.error.error.code === 'beta_not_supported' && /context-management-2025-06-27/.test(e.message));
});
