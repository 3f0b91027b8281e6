// GET /v1/limits against what the gateway does next, end to end (spec "GET /v1/limits": "never
// reports room that would be refused"; "Limits report": a paused state shows as the pause, managed
// is null when no provider serves on the service). For each managed state the report says paused
// with reason R exactly when the next managed request is refused with R, and before any request
// was refused; the managed block lists only the routes this organization is served on the
// service's keys.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import limitsSchema from '../../schemas/limits-report.json' with { type: 'json' };
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';

const validate = new Ajv({ allErrors: true, strict: false }).compile(limitsSchema);
const STATUS = { insufficient_balance: 402, spend_velocity_exceeded: 429, account_under_review: 403 } as const;
type Pause = keyof typeof STATUS;

let t: TestGateway;
before(async () => { t = await startTestGateway(); });
after(() => t.close());

async function limits(key: string): Promise<any> {
  const res = await fetch(`${t.url}/v1/limits`, { headers: { authorization: `Bearer ${key}` } });
  const json: any = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  assert.ok(validate(json), `schema: ${JSON.stringify(validate.errors)}`);
  return json;
}

/** One managed request (vendor_a on the service's key unless the org has its own). */
async function ask(key: string): Promise<{ status: number; code?: string; remaining: string | null; cost: number }> {
  const res = await fetch(`${t.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 3 })}`, start_within: 'now' }),
  });
  const json: any = await res.json();
  return { status: res.status, code: json.error?.code, remaining: res.headers.get('x-service-spend-remaining'), cost: Number(res.headers.get('x-service-cost') ?? 0) };
}

/** The report's pause, the next request's answer: they must agree (and a paused report shows no room). */
async function assertAgreement(key: string, expected: Pause | null): Promise<void> {
  const m = (await limits(key)).managed;
  assert.equal(m.paused_reason, expected, 'the pause the report shows');
  const next = await ask(key);
  if (expected === null) {
    assert.equal(m.serving, 'ok');
    assert.equal(next.status, 200, JSON.stringify(next));
    assert.equal(Number(next.remaining), m.spend_remaining_micro_usd, 'the header of the next request is the figure reported');
    return;
  }
  assert.deepEqual([m.serving, m.binding], ['paused', 'paused']);
  assert.ok(m.spend_remaining_micro_usd <= 0, 'no positive spend_remaining while paused');
  assert.ok(m.daily_spend.remaining_micro_usd <= 0, 'no positive daily_spend.remaining while paused');
  assert.deepEqual([next.status, next.code], [STATUS[expected], expected], 'the next request is refused with the pause shown');
  assert.equal((await limits(key)).managed.paused_reason, expected, 'and the report says the same after the refusal');
}

test('never topped up (balance 0): the report shows insufficient_balance before any request, and the request gets 402', async () => {
  const org = await t.newOrg();
  await assertAgreement(org.key, 'insufficient_balance');
});

test('a settlement took the balance to zero or below: paused insufficient_balance before the next request, which gets 402', async () => {
  const org = await t.newOrg({ balance: 10 });                 // one request costs more than 10
  const first = await ask(org.key);
  assert.equal(first.status, 200);
  assert.ok(first.cost > 10, `cost ${first.cost}`);
  const m = (await limits(org.key)).managed;
  assert.equal(m.balance.remaining_micro_usd, 10 - first.cost, 'the balance is still the signed money fact');
  await assertAgreement(org.key, 'insufficient_balance');
});

test('a settlement reached the daily ceiling: paused spend_velocity_exceeded before the next request, which gets 429', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 20 });
  assert.equal((await ask(org.key)).status, 200);
  const m = (await limits(org.key)).managed;
  assert.ok(m.daily_spend.used_micro_usd >= 20);
  assert.equal(m.balance.remaining_micro_usd > 0, true, 'money left; the day is what binds');
  await assertAgreement(org.key, 'spend_velocity_exceeded');
});

test('under review: paused account_under_review with daily_spend.remaining 0 (balance shown as it is), the request gets 403', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  await t.admin('POST', `/admin/v1/orgs/${org.orgId}/review`);
  const m = (await limits(org.key)).managed;
  assert.equal(m.daily_spend.remaining_micro_usd, 0);
  assert.equal(m.spend_remaining_micro_usd, 0);
  assert.equal(m.balance.remaining_micro_usd, 1_000_000);
  await assertAgreement(org.key, 'account_under_review');
});

test('the review first, then the balance: a review over an empty balance shows the review; after it, the balance', async () => {
  const org = await t.newOrg();
  await t.admin('POST', `/admin/v1/orgs/${org.orgId}/review`);
  await assertAgreement(org.key, 'account_under_review');
  await t.admin('DELETE', `/admin/v1/orgs/${org.orgId}/review`);
  await assertAgreement(org.key, 'insufficient_balance');
  await t.admin('POST', `/admin/v1/orgs/${org.orgId}/topups`, { cash_micro_usd: 1_000_000 });
  await assertAgreement(org.key, null);
});

test('serving ok: the report\'s spend_remaining is the next request\'s header; a raised ceiling lifts the daily pause in both', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  await assertAgreement(org.key, null);
  await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 1 });
  await assertAgreement(org.key, 'spend_velocity_exceeded');
  await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 10_000 });
  await assertAgreement(org.key, null);
});

test('own keys on every route: managed is null (nothing is served on the service for this org), and requests run on own keys', async () => {
  const org = await t.newOrg({ ownKeys: ['vendor_a', 'vendor_b', 'vendor_c', 'cloud_a', 'cloud_b'] });
  const l = await limits(org.key);
  assert.equal(l.managed, null);
  assert.equal(l.own_keys.unlimited, true);
  const r = await ask(org.key);
  assert.deepEqual([r.status, r.remaining], [200, 'unlimited']);
});

test('own keys on some routes: managed lists the others only; deleting an own key brings its route back', async () => {
  const org = await t.newOrg({ ownKeys: ['vendor_a', 'cloud_b'], balance: 1_000_000 });
  let m = (await limits(org.key)).managed;
  assert.deepEqual(m.providers, ['vendor_b', 'vendor_c', 'cloud_a']);
  assert.equal(m.serving, 'ok');
  assert.equal((await t.admin('DELETE', `/admin/v1/orgs/${org.orgId}/provider-keys/vendor_a`)).status, 200);
  m = (await limits(org.key)).managed;
  assert.deepEqual(m.providers, ['vendor_a', 'vendor_b', 'vendor_c', 'cloud_a']);
  await assertAgreement(org.key, null);                          // vendor_a runs on the service again
});
