// GET /v1/limits end to end (spec "Limits report", "GET /v1/limits", "Limits"): every field and its
// type (schemas/limits-report.json through ajv), never cached, 401 on a missing or wrong key,
// managed null without managed providers, the abuse rows, the ramp by simulated time, overrides,
// exempt organizations, and 503 limits_unavailable when the record cannot be read while own-key
// requests keep working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import limitsSchema from '../../schemas/limits-report.json' with { type: 'json' };
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
const DAY = 86_400_000;
const WEEK = 7 * DAY;
const MAX = Number.MAX_SAFE_INTEGER;
const nextMidnightS = (ms: number): number => (Math.floor(ms / DAY) + 1) * 86_400;

const validate = new Ajv({ allErrors: true, strict: false }).compile(limitsSchema);

let t: TestGateway;

before(async () => { t = await startTestGateway({ simulatedTime: true }); });
after(() => t.close());

async function getLimits(g: TestGateway, key?: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(`${g.url}/v1/limits`, { headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers } });
  return { status: res.status, headers: res.headers, json: await res.json() };
}

/** A 200 report that validates against the schema, with Cache-Control: no-store. */
async function report(g: TestGateway, key: string): Promise<any> {
  const r = await getLimits(g, key);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.equal(r.headers.get('cache-control'), 'no-store');
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  assert.ok(validate(r.json), `schema: ${JSON.stringify(validate.errors)}`);
  assertNoSpendHeaders(r.headers);
  return r.json;
}

function assertNoSpendHeaders(h: Headers): void {
  assert.equal(h.get('x-service-spend-remaining'), null);
  assert.equal(h.get('x-service-spend-as-of'), null);
}

const ABUSE_NULL = [
  { name: 'organization_requests', scope: 'organization', window_seconds: 60, limit: null, on_exceed: 'refuse' },
  { name: 'api_key_requests', scope: 'api_key', window_seconds: 60, limit: null, on_exceed: 'refuse' },
  { name: 'client_ip_requests', scope: 'client_ip', window_seconds: 60, limit: null, on_exceed: 'refuse' },
  { name: 'failed_authentications', scope: 'client_ip', window_seconds: 60, limit: null, on_exceed: 'refuse' },
];
const DEFAULT_POOLS = [
  { name: 'direct', scope: 'pool', window_seconds: 60, limit: 60_000, used: 0, on_exceed: 'refuse' },
  { name: 'cloud', scope: 'pool', window_seconds: 60, limit: 20_000, used: 0, on_exceed: 'refuse' },
];

test('every field of a topped-up organization, exactly, with its type (schema), Cache-Control: no-store', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const l = await report(t, org.key);
  assert.deepEqual(l, {
    object: 'limits',
    as_of: t.clock!.now(),
    own_keys: { unlimited: true, flex_race_slots: { limit: 16, scope: 'organization', on_exceed: 'degrade_to_standard' } },
    managed: {
      providers: ['vendor_a', 'vendor_b', 'vendor_c', 'cloud_a', 'cloud_b'],
      serving: 'ok',
      paused_reason: null,
      binding: 'balance',
      spend_remaining_micro_usd: 1_000_000,
      currency: 'USD',
      balance: { remaining_micro_usd: 1_000_000, cash_micro_usd: 1_000_000, credit_micro_usd: 0, reserved_micro_usd: 0 },
      daily_spend: { limit_micro_usd: 50_000_000, used_micro_usd: 0, remaining_micro_usd: 50_000_000, window: 'utc_day', resets_at: nextMidnightS(T0) },
      concurrency: { limit: 8, scope: 'organization', on_exceed: 'refuse' },
      ramp_week: 1,
      ramp_defaults: { concurrency: 8, daily_spend_micro_usd: 50_000_000 },
      override_in_force: { concurrency: false, daily_spend: false },
      rates: DEFAULT_POOLS,
    },
    abuse_limits: { counted_per_edge_location: true, request_body_bytes: 50_000_000, client_ip: { source: 'connection', trusted_proxies: 0 }, rates: ABUSE_NULL },
  });
});

test('the figures move with traffic (never a cached figure): spend, used, pool counts', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const c = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const before = await report(t, org.key);
  const { response } = await c.responses.create({ model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 3 })}`, start_within: 'now' } as any).withResponse();
  const cost = Number(response.headers.get('x-service-cost'));
  const after = await report(t, org.key);
  assert.equal(after.managed.balance.remaining_micro_usd, before.managed.balance.remaining_micro_usd - cost);
  assert.equal(after.managed.daily_spend.used_micro_usd, cost);
  assert.equal(after.managed.daily_spend.remaining_micro_usd, 50_000_000 - cost);
  assert.equal(after.managed.spend_remaining_micro_usd, 1_000_000 - cost);
  assert.equal(after.managed.rates[0].used, before.managed.rates[0].used + 1);
});

test('401 invalid_api_key without a key, with a wrong key and with a revoked key', async () => {
  const org = await t.newOrg({ balance: 1_000 });
  for (const [what, key] of [['no key', undefined], ['a wrong key', 'flex_live_not-a-real-key'], ['a non-prefixed key', 'sk-123'], ['an empty bearer', '']] as const) {
    const r = await getLimits(t, key);
    assert.equal(r.status, 401, what);
    assert.equal(r.json.error.code, 'invalid_api_key', what);
    assertNoSpendHeaders(r.headers);
  }
  assert.equal((await t.admin('DELETE', `/admin/v1/keys/${org.keyId}`)).status, 200);
  const r = await getLimits(t, org.key);
  assert.equal(r.status, 401);
  assert.equal(r.json.error.code, 'invalid_api_key');
});

test('ramp_week 0 before any cash top-up (promo credit alone stays in week 0), week 1 after it', async () => {
  const org = await t.newOrg();
  let l = await report(t, org.key);
  assert.equal(l.managed.ramp_week, 0);
  assert.deepEqual(l.managed.ramp_defaults, { concurrency: 2, daily_spend_micro_usd: 5_000_000 });
  assert.equal(l.managed.concurrency.limit, 2);
  assert.equal(l.managed.daily_spend.limit_micro_usd, 5_000_000);
  assert.equal(l.managed.balance.remaining_micro_usd, 0);
  assert.ok(l.managed.spend_remaining_micro_usd <= 0, 'no room is reported for an empty account');

  await t.admin('POST', `/admin/v1/orgs/${org.orgId}/topups`, { credit_micro_usd: 7_000_000 });
  l = await report(t, org.key);
  assert.equal(l.managed.ramp_week, 0);
  assert.equal(l.managed.binding, 'daily_spend', 'week 0 allows 5,000,000 a day, less than the 7,000,000 credit');
  assert.equal(l.managed.spend_remaining_micro_usd, 5_000_000);
  assert.deepEqual(l.managed.balance, { remaining_micro_usd: 7_000_000, cash_micro_usd: 0, credit_micro_usd: 7_000_000, reserved_micro_usd: 0 });

  await t.admin('POST', `/admin/v1/orgs/${org.orgId}/topups`, { cash_micro_usd: 1 });
  l = await report(t, org.key);
  assert.equal(l.managed.ramp_week, 1);
  assert.equal(l.managed.binding, 'balance');
  assert.equal(l.managed.spend_remaining_micro_usd, 7_000_001);
});

test('ramp progression by simulated time: week n, the last step past the end; resets_at follows the UTC day', async () => {
  const g = await startTestGateway({ simulatedTime: true });
  try {
    const org = await g.newOrg({ balance: 2_000_000_000 });       // first cash top-up at T0
    const expect = async (week: number, concurrency: number, daily: number): Promise<void> => {
      const l = await report(g, org.key);
      assert.equal(l.managed.ramp_week, week, `at +${(g.clock!.now() - T0) / DAY} days`);
      assert.deepEqual(l.managed.ramp_defaults, { concurrency, daily_spend_micro_usd: daily });
      assert.equal(l.managed.concurrency.limit, concurrency);
      assert.equal(l.managed.daily_spend.limit_micro_usd, daily);
      assert.equal(l.managed.daily_spend.resets_at, nextMidnightS(g.clock!.now()));
      assert.equal(l.as_of, g.clock!.now());
    };
    await expect(1, 8, 50_000_000);
    g.clock!.set(T0 + WEEK - 1);
    await expect(1, 8, 50_000_000);
    g.clock!.set(T0 + WEEK);
    await expect(2, 32, 250_000_000);
    g.clock!.set(T0 + 2 * WEEK);
    await expect(3, 32, 250_000_000);                            // no step for week 3: week 2's applies
    g.clock!.set(T0 + 3 * WEEK);
    await expect(4, 128, 1_000_000_000);
    g.clock!.set(T0 + 30 * WEEK + 3 * DAY);
    await expect(31, 128, 1_000_000_000);                         // past the last step
  } finally { await g.close(); }
});

test('overrides are shown in override_in_force and replace the schedule; null clears them back', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const path = `/admin/v1/orgs/${org.orgId}/overrides`;
  await t.admin('PUT', path, { concurrency: 3 });
  let l = await report(t, org.key);
  assert.deepEqual(l.managed.override_in_force, { concurrency: true, daily_spend: false });
  assert.equal(l.managed.concurrency.limit, 3);
  assert.deepEqual(l.managed.ramp_defaults, { concurrency: 8, daily_spend_micro_usd: 50_000_000 }, 'what the week alone gives');

  await t.admin('PUT', path, { daily_spend_micro_usd: 123_456 });
  l = await report(t, org.key);
  assert.deepEqual(l.managed.override_in_force, { concurrency: true, daily_spend: true });
  assert.equal(l.managed.concurrency.limit, 3, 'an absent field leaves the other override as it was');
  assert.equal(l.managed.daily_spend.limit_micro_usd, 123_456);
  assert.equal(l.managed.daily_spend.remaining_micro_usd, 123_456);
  assert.equal(l.managed.binding, 'daily_spend');
  assert.equal(l.managed.spend_remaining_micro_usd, 123_456);

  await t.admin('PUT', path, { concurrency: null, daily_spend_micro_usd: null });
  l = await report(t, org.key);
  assert.deepEqual(l.managed.override_in_force, { concurrency: false, daily_spend: false });
  assert.equal(l.managed.concurrency.limit, 8);
  assert.equal(l.managed.daily_spend.limit_micro_usd, 50_000_000);
  assert.equal(l.managed.binding, 'balance');
});

test('an exempt organization: binding exempt, ramp fields null, ceilings that never bind; a review still shows as paused', async () => {
  const org = await t.newOrg({ balance: 3_000_000 });
  await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 1_000 });
  assert.equal((await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/exempt`, { exempt: true })).status, 200);
  let l = await report(t, org.key);
  assert.equal(l.managed.binding, 'exempt');
  assert.equal(l.managed.serving, 'ok');
  assert.equal(l.managed.ramp_week, null);
  assert.equal(l.managed.ramp_defaults, null);
  assert.equal(l.managed.override_in_force, null);
  assert.equal(l.managed.daily_spend.limit_micro_usd, MAX);
  assert.equal(l.managed.concurrency.limit, MAX);
  assert.equal(l.managed.spend_remaining_micro_usd, 3_000_000, 'the balance still applies');

  await t.admin('POST', `/admin/v1/orgs/${org.orgId}/review`);
  l = await report(t, org.key);
  assert.equal(l.managed.binding, 'paused');
  assert.equal(l.managed.paused_reason, 'account_under_review');
  await t.admin('DELETE', `/admin/v1/orgs/${org.orgId}/review`);

  await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/exempt`, { exempt: false });
  l = await report(t, org.key);
  assert.equal(l.managed.binding, 'daily_spend');
  assert.equal(l.managed.ramp_week, 1);
  assert.deepEqual(l.managed.override_in_force, { concurrency: false, daily_spend: true });
});

test('managed is null when the configuration serves no provider on the service; own keys still reported', async () => {
  const g = await startTestGateway({ simulatedTime: true, config: { managed: {} } });
  try {
    const org = await g.newOrg({ ownKeys: ['vendor_a'] });
    const l = await report(g, org.key);
    assert.equal(l.managed, null);
    assert.equal(l.as_of, g.clock!.now());
    assert.deepEqual(l.own_keys, { unlimited: true, flex_race_slots: { limit: 16, scope: 'organization', on_exceed: 'degrade_to_standard' } });
    assert.deepEqual(l.abuse_limits.rates, ABUSE_NULL);
  } finally { await g.close(); }
});

test('abuse_limits: unpublished by default (null), published figures when the configuration asks', async () => {
  const g = await startTestGateway({ config: {
    abuse_limits: { organization_requests: 600, api_key_requests: 300, client_ip_requests: 1_200, failed_authentications: 20, publish: true },
    flex_race_slots: 4,
  } });
  try {
    const org = await g.newOrg({ balance: 1 });
    const l = await report(g, org.key);
    assert.deepEqual(l.abuse_limits.rates.map((r: any) => [r.name, r.limit]), [
      ['organization_requests', 600], ['api_key_requests', 300], ['client_ip_requests', 1_200], ['failed_authentications', 20],
    ]);
    assert.equal(l.own_keys.flex_race_slots.limit, 4);
  } finally { await g.close(); }
});

test('503 limits_unavailable when the ledger record cannot be read; own-key requests keep working; managed requests get no spend headers', async () => {
  const g = await startTestGateway();
  const file = g.gw.services.store.file!;
  const other = new Database(file);
  try {
    const own = await g.newOrg({ ownKeys: ['vendor_a'], balance: 1_000_000 });
    const managed = await g.newOrg({ balance: 1_000_000 });
    const ownClient = new OpenAI({ apiKey: own.key, baseURL: `${g.url}/v1`, maxRetries: 0 });
    const managedClient = new OpenAI({ apiKey: managed.key, baseURL: `${g.url}/v1`, maxRetries: 0 });
    const ask = (c: OpenAI) => c.responses.create({ model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 2 })}`, start_within: 'now' } as any).withResponse();

    other.exec('ALTER TABLE ledger_orgs RENAME TO ledger_orgs_unreadable');  // another process breaks the record
    for (const key of [own.key, managed.key]) {
      const r = await getLimits(g, key);
      assert.equal(r.status, 503);
      assert.equal(r.json.error.code, 'limits_unavailable');
      assertNoSpendHeaders(r.headers);
    }
    const { response } = await ask(ownClient);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-service-spend-remaining'), 'unlimited');
    await assert.rejects(ask(managedClient), (err: any) => {
      assert.equal(err.status, 503);
      assert.equal(err.code, 'limits_unavailable');
      assert.equal(err.headers.get('x-service-spend-remaining'), null, 'no spend headers when the balance could not be read');
      return true;
    });

    other.exec('ALTER TABLE ledger_orgs_unreadable RENAME TO ledger_orgs');
    assert.equal((await report(g, managed.key)).managed.balance.remaining_micro_usd, 1_000_000);
    assert.equal((await ask(managedClient)).response.status, 200);
  } finally {
    other.close();
    await g.close();
  }
});
