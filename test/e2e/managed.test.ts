// Managed serving end to end (spec "Managed serving state", "Response headers", "Limits"): one test
// per row of the state table and per refusal, through real sockets with the official openai SDK,
// GET /v1/limits read with plain fetch. Time is xstate's SimulatedClock, so the UTC day and the
// ramp week move only when a test moves them; requests are held open with slow simulator streams.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, waitFor, sim, type TestGateway } from '../helpers/gateway.ts';
import { DEFAULT_LEDGER } from '../../lib/config.ts';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0); // the simulated clock's start (test/helpers/gateway.ts)
const NEXT_MIDNIGHT = Date.UTC(2026, 10, 22, 0, 0, 0);

let t: TestGateway;

before(async () => { t = await startTestGateway({ simulatedTime: true }); });
after(() => t.close());

// ── helpers ──────────────────────────────────────────────────────────────────────────────────

const clientFor = (g: TestGateway, key: string): OpenAI => new OpenAI({ apiKey: key, baseURL: `${g.url}/v1`, maxRetries: 0 });

/** A small managed request on vendor A (gpt-5.4-mini, standard at once). */
const ask = (c: OpenAI, extra: Record<string, unknown> = {}) =>
  c.responses.create({ model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 5 })}`, start_within: 'now', ...extra } as any).withResponse();

async function refusal(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try { await p; } catch (err) {
    if (err instanceof OpenAI.APIError) return err;
    throw err;
  }
  return assert.fail('expected the request to be refused');
}

async function expectRefused(p: Promise<unknown>, status: number, code: string): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await refusal(p);
  assert.equal(err.status, status, `status of ${err.code}: ${err.message}`);
  assert.equal(err.code, code);
  assertNoSpendHeaders(err.headers, `${status} ${code}`);
  return err;
}

function assertNoSpendHeaders(h: Headers | undefined, what: string): void {
  assert.equal(h?.get('x-service-spend-remaining') ?? null, null, `no x-service-spend-remaining on ${what}`);
  assert.equal(h?.get('x-service-spend-as-of') ?? null, null, `no x-service-spend-as-of on ${what}`);
}

async function limitsOf(g: TestGateway, key: string): Promise<any> {
  const res = await fetch(`${g.url}/v1/limits`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(res.status, 200);
  return res.json();
}

async function ledgerOf(g: TestGateway, orgId: string): Promise<{ snapshot: any; entries: any[] }> {
  const r = await g.admin('GET', `/admin/v1/orgs/${orgId}/ledger`);
  assert.equal(r.status, 200);
  return r.json;
}

const put = (g: TestGateway, path: string, body: unknown) => g.admin('PUT', path, body);
const topup = (g: TestGateway, orgId: string, cash: number) => g.admin('POST', `/admin/v1/orgs/${orgId}/topups`, { cash_micro_usd: cash });

/** gpt-5.4-mini standard: 0.75 µUSD per input token, 4.5 per output token. */
const holdOf = (bodyBytes: number, maxOutput = 4_096): number =>
  Math.ceil((Math.ceil(bodyBytes / 4) * 750_000) / 1e6) + Math.ceil((maxOutput * 4_500_000) / 1e6);

const slowBody = (tokens = 200): string =>
  JSON.stringify({ model: 'gpt-5.4-mini', input: `slow ${sim({ output_tokens: tokens, tokens_per_s: 20 })}`, start_within: 'now', stream: true });

/** Opens a managed stream that lasts ~10 s; resolves at its commit (headers), i.e. once admitted. */
async function openSlow(g: TestGateway, key: string): Promise<{ res: Response; stop(): Promise<void>; hold: number }> {
  const ac = new AbortController();
  const body = slowBody();
  const res = await fetch(`${g.url}/v1/responses`, {
    method: 'POST', signal: ac.signal, body,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  });
  return {
    res, hold: holdOf(Buffer.byteLength(body)),
    async stop() {
      const before = g.gw.services.inflight.size;
      ac.abort();
      await res.body?.cancel().catch(() => {});
      await waitFor(() => g.gw.services.inflight.size < before, 'the aborted stream to settle');
    },
  };
}

const idle = (g: TestGateway) => waitFor(() => g.gw.services.inflight.size === 0, 'no request in flight');

// ── the state table ──────────────────────────────────────────────────────────────────────────

test('ok → paused(insufficient_balance): balance at zero → 402 and the pause shows in /v1/limits; a top-up repairs it', async () => {
  const org = await t.newOrg();
  const c = clientFor(t, org.key);
  await expectRefused(ask(c), 402, 'insufficient_balance');

  const l = await limitsOf(t, org.key);
  assert.equal(l.managed.serving, 'paused');
  assert.equal(l.managed.paused_reason, 'insufficient_balance');
  assert.equal(l.managed.binding, 'paused');
  assert.equal(l.managed.balance.remaining_micro_usd, 0);
  assert.ok(l.managed.spend_remaining_micro_usd <= 0, 'a paused report never shows a positive figure');

  await topup(t, org.orgId, 1_000_000);
  const after = await limitsOf(t, org.key);
  assert.equal(after.managed.serving, 'ok');
  assert.equal(after.managed.paused_reason, null);
  assert.equal(after.managed.binding, 'balance');
  const { response } = await ask(c);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-service-spend-remaining'), '1000000');
});

test('below zero after an overspend: signed negative figures, 402 + pause, a top-up that leaves it negative does not repair, enough money does', async () => {
  const org = await t.newOrg({ balance: 10 });
  const c = clientFor(t, org.key);
  const first = await ask(c);                         // admitted: the balance (10) is above zero
  assert.equal(first.response.headers.get('x-service-spend-remaining'), '10');
  const cost = Number(first.response.headers.get('x-service-cost'));
  assert.ok(cost > 10, `the request costs more than the balance (${cost})`);

  const l = await limitsOf(t, org.key);
  assert.equal(l.managed.balance.remaining_micro_usd, 10 - cost);
  assert.equal(l.managed.balance.cash_micro_usd, 10 - cost);
  assert.equal(l.managed.spend_remaining_micro_usd, 10 - cost, 'the figure is signed: negative after an overspend');

  await expectRefused(ask(c), 402, 'insufficient_balance');
  assert.equal((await limitsOf(t, org.key)).managed.paused_reason, 'insufficient_balance');

  await topup(t, org.orgId, cost - 10);               // back to exactly zero: still at or below zero
  await expectRefused(ask(c), 402, 'insufficient_balance');
  const still = await limitsOf(t, org.key);
  assert.equal(still.managed.serving, 'paused');
  assert.equal(still.managed.balance.remaining_micro_usd, 0);

  await topup(t, org.orgId, 500);
  const { response } = await ask(c);
  assert.equal(response.headers.get('x-service-spend-remaining'), '500');
});

test('ok → paused(spend_velocity_exceeded): settled + in-flight holds past the daily ceiling → 429; a top-up does not repair; the next UTC midnight does', async () => {
  const g = await startTestGateway({ simulatedTime: true });
  try {
    const org = await g.newOrg({ balance: 10_000_000 });
    const c = clientFor(g, org.key);
    await put(g, `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 1_000 });
    const slow = await openSlow(g, org.key);          // admitted with room (used 0 < 1000); its hold is ~18,000
    assert.equal(slow.res.status, 200);
    assert.equal(slow.res.headers.get('x-service-spend-remaining'), '1000');
    assert.ok(slow.hold > 1_000);

    await expectRefused(ask(c), 429, 'spend_velocity_exceeded');
    const l = await limitsOf(g, org.key);
    assert.equal(l.managed.serving, 'paused');
    assert.equal(l.managed.paused_reason, 'spend_velocity_exceeded');
    assert.equal(l.managed.binding, 'paused');
    assert.equal(l.managed.daily_spend.used_micro_usd, slow.hold, 'used counts the in-flight hold');
    assert.ok(l.managed.spend_remaining_micro_usd <= 0);

    await slow.stop();
    await expectRefused(ask(c), 429, 'spend_velocity_exceeded');   // used fell below the ceiling: not a repair
    await topup(g, org.orgId, 5_000_000);
    await expectRefused(ask(c), 429, 'spend_velocity_exceeded');   // a top-up is not a repair either
    assert.equal((await limitsOf(g, org.key)).managed.paused_reason, 'spend_velocity_exceeded');

    g.clock!.set(NEXT_MIDNIGHT - 1);
    await expectRefused(ask(c), 429, 'spend_velocity_exceeded');   // still the same UTC day
    g.clock!.set(NEXT_MIDNIGHT);
    const next = await limitsOf(g, org.key);
    assert.equal(next.managed.serving, 'ok');
    assert.equal(next.managed.paused_reason, null);
    assert.equal(next.managed.daily_spend.used_micro_usd, 0);
    assert.equal(next.managed.daily_spend.resets_at, NEXT_MIDNIGHT / 1000 + 86_400);
    const { response } = await ask(c);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-service-spend-remaining'), '1000');
  } finally { await g.close(); }
});

test('paused(spend_velocity_exceeded) → ok by a raised daily ceiling (admin override); an unchanged ceiling does not', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const c = clientFor(t, org.key);
  await put(t, `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 1_000 });
  const slow = await openSlow(t, org.key);
  try {
    await expectRefused(ask(c), 429, 'spend_velocity_exceeded');
    await put(t, `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 1_000 });
    await expectRefused(ask(c), 429, 'spend_velocity_exceeded');
    const r = await put(t, `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 100_000 });
    assert.equal(r.status, 200);
    const l = await limitsOf(t, org.key);
    assert.equal(l.managed.serving, 'ok');
    assert.equal(l.managed.daily_spend.limit_micro_usd, 100_000);
    assert.deepEqual(l.managed.override_in_force, { concurrency: false, daily_spend: true });
    const { response } = await ask(c);
    assert.equal(response.headers.get('x-service-spend-remaining'), String(100_000 - slow.hold));
  } finally { await slow.stop(); }
});

test('paused(spend_velocity_exceeded) survives a review started and ended the same day (only midnight or a raised ceiling lift it)', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const c = clientFor(t, org.key);
  await put(t, `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 1_000 });
  const slow = await openSlow(t, org.key);
  await expectRefused(ask(c), 429, 'spend_velocity_exceeded');
  await slow.stop();                                   // its estimate settles far below the ceiling
  const used = (await limitsOf(t, org.key)).managed.daily_spend.used_micro_usd;
  assert.ok(used < 1_000, `used fell below the ceiling (${used})`);
  await t.admin('POST', `/admin/v1/orgs/${org.orgId}/review`);
  await expectRefused(ask(c), 403, 'account_under_review');
  await t.admin('DELETE', `/admin/v1/orgs/${org.orgId}/review`);
  const l = await limitsOf(t, org.key);
  assert.equal(l.managed.paused_reason, 'spend_velocity_exceeded', 'the pause the review covered is back');
  await expectRefused(ask(c), 429, 'spend_velocity_exceeded');
  await put(t, `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 100_000 });
  assert.equal((await ask(c)).response.status, 200);
});

test('ok → paused(account_under_review): 403 while under review (a top-up does not end it); the end of the review repairs it', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const c = clientFor(t, org.key);
  assert.equal((await t.admin('POST', `/admin/v1/orgs/${org.orgId}/review`)).status, 200);
  await expectRefused(ask(c), 403, 'account_under_review');
  const l = await limitsOf(t, org.key);
  assert.equal(l.managed.serving, 'paused');
  assert.equal(l.managed.paused_reason, 'account_under_review');
  assert.equal(l.managed.binding, 'paused');
  assert.ok(l.managed.spend_remaining_micro_usd <= 0, 'no positive figure while paused');
  assert.equal(l.managed.balance.remaining_micro_usd, 1_000_000);

  await topup(t, org.orgId, 1_000_000);
  await expectRefused(ask(c), 403, 'account_under_review');

  assert.equal((await t.admin('DELETE', `/admin/v1/orgs/${org.orgId}/review`)).status, 200);
  assert.equal((await limitsOf(t, org.key)).managed.serving, 'ok');
  const { response } = await ask(c);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-service-spend-remaining'), '2000000');
});

test('own-key routes keep working while managed serving is paused (review, and an org with no money at all)', async () => {
  const org = await t.newOrg({ ownKeys: ['vendor_a'], balance: 1_000_000 });
  const c = clientFor(t, org.key);
  await t.admin('POST', `/admin/v1/orgs/${org.orgId}/review`);
  const { data, response } = await ask(c, { include_cost: true });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-service-spend-remaining'), 'unlimited');
  assert.equal(response.headers.get('x-service-spend-as-of'), null);
  assert.equal((data.usage as any).routing.mode, 'byok');
  // the same org's managed route (vendor B model, no own key) is paused
  await expectRefused(c.responses.create({ model: 'gemini-3.5-flash', input: `hi ${sim({ output_tokens: 3 })}`, start_within: 'now' } as any), 403, 'account_under_review');
  const l = await limitsOf(t, org.key);
  assert.equal(l.managed.serving, 'paused');
  assert.equal(l.own_keys.unlimited, true);
  assert.equal(l.managed.balance.remaining_micro_usd, 1_000_000, 'own-key traffic spends no balance');

  const broke = await t.newOrg({ ownKeys: ['vendor_a'] });
  const r = await ask(clientFor(t, broke.key));
  assert.equal(r.response.headers.get('x-service-spend-remaining'), 'unlimited');
  await t.admin('DELETE', `/admin/v1/orgs/${org.orgId}/review`);
});

test('an own-key primary route with a managed fallback keeps working while managed serving is paused', async () => {
  // provider: [vendor_b (own key), cloud_a (managed)]: the own-key route runs first and is not a
  // managed request; only the fallback would spend the balance.
  const org = await t.newOrg({ ownKeys: ['vendor_b'] });               // no money at all
  const c = clientFor(t, org.key);
  const mixed = () => c.responses.create({ model: 'gemini-3.5-flash', input: `hi ${sim({ output_tokens: 3 })}`, start_within: 'now', provider: ['vendor_b', 'cloud_a'] } as any).withResponse();
  await t.admin('POST', `/admin/v1/orgs/${org.orgId}/review`);
  const r = await mixed().catch((err) => assert.fail(`refused with ${err.status} ${err.code}: the own-key route would have served`));
  assert.equal(r.response.headers.get('x-service-served-provider'), 'vendor_b');
  assert.equal(r.response.headers.get('x-service-spend-remaining'), 'unlimited');
  await t.admin('DELETE', `/admin/v1/orgs/${org.orgId}/review`);
  const r2 = await mixed().catch((err) => assert.fail(`refused with ${err.status} ${err.code} on a zero balance: the own-key route would have served`));
  assert.equal(r2.response.headers.get('x-service-served-provider'), 'vendor_b');
});

// ── refusals that do not pause ───────────────────────────────────────────────────────────────

test('managed concurrency overrun → 429 rate_limit_exceeded with Retry-After, no pause', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const c = clientFor(t, org.key);
  await put(t, `/admin/v1/orgs/${org.orgId}/overrides`, { concurrency: 2 });
  const a = await openSlow(t, org.key);
  const b = await openSlow(t, org.key);
  try {
    const err = await expectRefused(ask(c), 429, 'rate_limit_exceeded');
    const ra = Number(err.headers?.get('retry-after'));
    assert.ok(Number.isInteger(ra) && ra >= 1, `Retry-After in whole seconds (got ${err.headers?.get('retry-after')})`);
    const l = await limitsOf(t, org.key);
    assert.equal(l.managed.serving, 'ok');
    assert.equal(l.managed.paused_reason, null);
    assert.equal(l.managed.concurrency.limit, 2);
    assert.equal(l.managed.balance.reserved_micro_usd, a.hold + b.hold);
  } finally { await a.stop(); }
  const { response } = await ask(c);                 // a slot freed: admitted again
  assert.equal(response.status, 200);
  await b.stop();
});

test('shared pool per-minute rate → 429 rate_limit_exceeded for every organization on it, no pause; other pools serve; the next minute frees it', async () => {
  const g = await startTestGateway({
    simulatedTime: true,
    config: { ledger: { ...DEFAULT_LEDGER, pools: [
      { name: 'direct', routes: ['vendor_a', 'vendor_b', 'vendor_c'], per_minute: 2 },
      { name: 'cloud', routes: ['cloud_a', 'cloud_b'], per_minute: 100 },
    ] } },
  });
  try {
    const a = await g.newOrg({ balance: 10_000_000 });
    const b = await g.newOrg({ balance: 10_000_000 });
    const ca = clientFor(g, a.key);
    const cb = clientFor(g, b.key);
    await ask(ca);
    await ask(cb);
    const err = await expectRefused(ask(ca), 429, 'rate_limit_exceeded');
    assert.equal(err.headers?.get('retry-after'), '60', 'the window frees at the next minute');
    await expectRefused(ask(cb), 429, 'rate_limit_exceeded');
    const l = await limitsOf(g, a.key);
    assert.equal(l.managed.serving, 'ok');
    assert.equal(l.managed.paused_reason, null);
    assert.deepEqual(l.managed.rates.map((r: any) => [r.name, r.limit, r.used]), [['direct', 2, 2], ['cloud', 100, 0]]);
    assert.deepEqual(l.managed.rates[0], { name: 'direct', scope: 'pool', window_seconds: 60, limit: 2, used: 2, on_exceed: 'refuse' });

    const cloud = await ca.responses.create({ model: 'gemini-3.5-flash', input: `hi ${sim({ output_tokens: 3 })}`, start_within: 'now', provider: ['cloud_a'] } as any).withResponse();
    assert.equal(cloud.response.headers.get('x-service-served-provider'), 'cloud_a');

    g.clock!.increment(59_999);
    await expectRefused(ask(ca), 429, 'rate_limit_exceeded');
    g.clock!.increment(1);
    assert.equal((await ask(ca)).response.status, 200);
  } finally { await g.close(); }
});

// ── spend headers ────────────────────────────────────────────────────────────────────────────

test('x-service-spend-remaining = min(balance, daily remaining) read at admission, before the request\'s own cost; as-of = admission time', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const c = clientFor(t, org.key);
  const r1 = await ask(c);
  assert.equal(r1.response.headers.get('x-service-spend-remaining'), '1000000', 'balance binds (daily 50,000,000)');
  assert.equal(r1.response.headers.get('x-service-spend-as-of'), String(t.clock!.now()));
  const c1 = Number(r1.response.headers.get('x-service-cost'));
  assert.ok(c1 > 0);

  t.clock!.increment(1_234);
  const r2 = await ask(c);
  assert.equal(r2.response.headers.get('x-service-spend-remaining'), String(1_000_000 - c1), 'read before its own cost');
  assert.equal(r2.response.headers.get('x-service-spend-as-of'), String(t.clock!.now()));
  const c2 = Number(r2.response.headers.get('x-service-cost'));

  await put(t, `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 600_000 });
  const r3 = await ask(c);
  assert.equal(r3.response.headers.get('x-service-spend-remaining'), String(600_000 - c1 - c2), 'the daily ceiling binds');
  const c3 = Number(r3.response.headers.get('x-service-cost'));

  // A hold in flight counts against the day, not against the balance.
  const slow = await openSlow(t, org.key);
  try {
    assert.equal(slow.res.headers.get('x-service-spend-remaining'), String(600_000 - c1 - c2 - c3));
    const r4 = await ask(c);
    assert.equal(r4.response.headers.get('x-service-spend-remaining'), String(600_000 - c1 - c2 - c3 - slow.hold));
  } finally { await slow.stop(); }
});

test('/v1/limits spend_remaining_micro_usd and as_of equal the headers of a request admitted at the same moment', async () => {
  const org = await t.newOrg({ balance: 2_000_000 });
  const c = clientFor(t, org.key);
  const check = async (binding: string): Promise<void> => {
    const l = await limitsOf(t, org.key);
    assert.equal(l.managed.binding, binding);
    const { response } = await ask(c);
    assert.equal(response.headers.get('x-service-spend-remaining'), String(l.managed.spend_remaining_micro_usd), `figure (${binding})`);
    assert.equal(response.headers.get('x-service-spend-as-of'), String(l.as_of), `as_of (${binding})`);
    t.clock!.increment(1_000);
  };
  await check('balance');
  await put(t, `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: 300_000 });
  await check('daily_spend');
  const slow = await openSlow(t, org.key);
  try { await check('daily_spend'); } finally { await slow.stop(); }
  await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/exempt`, { exempt: true });
  await check('exempt');
});

test('own keys: x-service-spend-remaining unlimited, no as-of; /v1/models carries no spend headers', async () => {
  const own = await t.newOrg({ ownKeys: ['vendor_a'] });
  const { response } = await ask(clientFor(t, own.key));
  assert.equal(response.headers.get('x-service-spend-remaining'), 'unlimited');
  assert.equal(response.headers.get('x-service-spend-as-of'), null);

  const managed = await t.newOrg({ balance: 1_000_000 });
  for (const key of [own.key, managed.key]) {
    const res = await fetch(`${t.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    assertNoSpendHeaders(res.headers, '/v1/models');
    await res.arrayBuffer();
  }
  await idle(t);
});
