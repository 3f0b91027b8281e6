// Admission, the contract suite run once per adapter (a real SQLite file; a real PostgreSQL
// database): one test per row of the spec's "Managed serving state" table, per refusal code, and
// per recovery rule.
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { BalanceOverflowError } from '../../lib/ledger/rules.ts';
import { adapters, fundedOrg, admit, okHold, USD, DAY, type Fixture } from './helpers.ts';

for (const adapter of await adapters('admission')) describe(adapter.name, () => {
  let f: Fixture;
  before(() => adapter.setup());
  after(() => adapter.teardown());
  beforeEach(async () => { f = await adapter.fixture(); });
  afterEach(() => f.close());

  const startOfNextUtcDay = (ms: number): number => (Math.floor(ms / DAY) + 1) * DAY;

  test('ok → paused(insufficient_balance): balance at zero refuses 402 and pauses', async () => {
    await f.ledger.ensureOrg('o', f.clock.now());
    assert.deepEqual(await admit(f, 'o', 100), { ok: false, code: 'insufficient_balance' });
    const s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.serving, 'paused');
    assert.equal(s.pausedReason, 'insufficient_balance');
    assert.equal(s.binding, 'paused');
    assert.equal(s.spendRemainingMicroUsd, 0);
  });

  test('ok → paused(spend_velocity_exceeded): settled + holds at the ceiling refuses 429 and pauses', async () => {
    await fundedOrg(f, 'o', 100 * USD); // week 1: daily ceiling 10 USD, concurrency 4
    const h1 = okHold(await admit(f, 'o', 6 * USD));
    await f.ledger.settle(h1, 6 * USD, f.clock.now()); // settled 6
    okHold(await admit(f, 'o', 3 * USD));              // used 6 < 10: admitted; used now 9
    const last = await admit(f, 'o', 3 * USD);         // used 9 < 10: admitted (may overshoot by its hold)
    assert.ok(last.ok);
    assert.equal(last.spendRemainingMicroUsd, 1 * USD); // min(balance 94, 10 − 9)
    assert.deepEqual(await admit(f, 'o', 1), { ok: false, code: 'spend_velocity_exceeded' }); // used 12 ≥ 10
    const s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.serving, 'paused');
    assert.equal(s.pausedReason, 'spend_velocity_exceeded');
    assert.equal(s.binding, 'paused');
    assert.equal(s.dailyUsedMicroUsd, 12 * USD);
    assert.equal(s.spendRemainingMicroUsd, -2 * USD);
  });

  test('daily ceiling boundary: used exactly at the ceiling is refused (used >= limit)', async () => {
    await fundedOrg(f, 'o', 100 * USD);
    okHold(await admit(f, 'o', 10 * USD));
    assert.deepEqual(await admit(f, 'o', 1), { ok: false, code: 'spend_velocity_exceeded' });
  });

  test('ok → paused(account_under_review): review refuses 403', async () => {
    await fundedOrg(f, 'o', 100 * USD);
    const s = await f.ledger.startReview('o', f.clock.now());
    assert.equal(s.serving, 'paused');
    assert.equal(s.pausedReason, 'account_under_review');
    assert.equal(s.binding, 'paused');
    assert.equal(s.spendRemainingMicroUsd, 0, 'a paused org reports no positive figure');
    assert.deepEqual(await admit(f, 'o', 100), { ok: false, code: 'account_under_review' });
  });

  test('paused(insufficient_balance) → ok: adding money repairs it, also a negative balance', async () => {
    await fundedOrg(f, 'o', 1 * USD);
    const h = okHold(await admit(f, 'o', 1 * USD));
    await f.ledger.settle(h, 3 * USD, f.clock.now()); // balance −2 USD
    assert.equal((await f.ledger.snapshot('o', f.clock.now())).spendRemainingMicroUsd, -2 * USD);
    assert.deepEqual(await admit(f, 'o', 1), { ok: false, code: 'insufficient_balance' });
    let s = await f.ledger.topup('o', { cash_micro_usd: 1 * USD }, f.clock.now()); // −1: still paused
    assert.equal(s.pausedReason, 'insufficient_balance');
    assert.deepEqual(await admit(f, 'o', 1), { ok: false, code: 'insufficient_balance' });
    s = await f.ledger.topup('o', { cash_micro_usd: 5 * USD }, f.clock.now()); // +4
    assert.equal(s.serving, 'ok');
    assert.equal(s.pausedReason, null);
    assert.equal(s.spendRemainingMicroUsd, 4 * USD);
    assert.ok((await admit(f, 'o', 1)).ok);
    const kinds = (await f.ledger.entries('o', 50)).map((e) => e.kind);
    assert.ok(kinds.includes('pause') && kinds.includes('unpause'));
  });

  test('paused(spend_velocity_exceeded): a top-up does not recover it', async () => {
    await fundedOrg(f, 'o', 100 * USD);
    okHold(await admit(f, 'o', 10 * USD));
    assert.equal((await admit(f, 'o', 1) as { code: string }).code, 'spend_velocity_exceeded');
    const s = await f.ledger.topup('o', { cash_micro_usd: 1000 * USD }, f.clock.now());
    assert.equal(s.pausedReason, 'spend_velocity_exceeded');
    assert.deepEqual(await admit(f, 'o', 1), { ok: false, code: 'spend_velocity_exceeded' });
  });

  test('paused(spend_velocity_exceeded) → ok at the next UTC midnight', async () => {
    await fundedOrg(f, 'o', 100 * USD);
    const h = okHold(await admit(f, 'o', 10 * USD));
    await f.ledger.settle(h, 10 * USD, f.clock.now());
    assert.equal((await admit(f, 'o', 1) as { code: string }).code, 'spend_velocity_exceeded');
    const midnight = startOfNextUtcDay(f.clock.now());
    f.clock.set(midnight - 1);
    assert.equal((await f.ledger.snapshot('o', f.clock.now())).serving, 'paused');
    assert.equal((await admit(f, 'o', 1) as { code: string }).code, 'spend_velocity_exceeded');
    f.clock.set(midnight);
    const s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.serving, 'ok', 'the report sees the rollover just as admission does');
    assert.equal(s.dailyUsedMicroUsd, 0);
    assert.equal(s.dailyResetsAtS, (midnight + DAY) / 1000);
    assert.ok((await admit(f, 'o', 1)).ok);
  });

  test('paused(spend_velocity_exceeded) → ok by a raised daily ceiling (override), not by a lower one', async () => {
    await fundedOrg(f, 'o', 100 * USD);
    const h = okHold(await admit(f, 'o', 10 * USD));
    await f.ledger.settle(h, 10 * USD, f.clock.now());
    assert.equal((await admit(f, 'o', 1) as { code: string }).code, 'spend_velocity_exceeded');
    let s = await f.ledger.setOverrides('o', { daily_spend_micro_usd: 10 * USD }, f.clock.now()); // same ceiling
    assert.equal(s.pausedReason, 'spend_velocity_exceeded');
    s = await f.ledger.setOverrides('o', { daily_spend_micro_usd: 15 * USD }, f.clock.now());
    assert.equal(s.serving, 'ok');
    assert.equal(s.binding, 'daily_spend');
    assert.equal(s.spendRemainingMicroUsd, 5 * USD);
    const r = await admit(f, 'o', 1);
    assert.ok(r.ok);
    assert.equal(r.spendRemainingMicroUsd, 5 * USD);
  });

  test('paused(spend_velocity_exceeded): holds settling below their estimate do not lift it', async () => {
    await fundedOrg(f, 'o', 100 * USD);
    const h = okHold(await admit(f, 'o', 10 * USD));
    assert.equal((await admit(f, 'o', 1) as { code: string }).code, 'spend_velocity_exceeded');
    await f.ledger.settle(h, 2 * USD, f.clock.now()); // used falls to 2, ceiling unchanged
    assert.equal((await f.ledger.snapshot('o', f.clock.now())).pausedReason, 'spend_velocity_exceeded');
    assert.equal((await admit(f, 'o', 1) as { code: string }).code, 'spend_velocity_exceeded');
  });

  test('paused(account_under_review) → ok at end of review; other conditions re-evaluated at admission', async () => {
    await fundedOrg(f, 'o', 1 * USD);
    const h = okHold(await admit(f, 'o', 1 * USD));
    await f.ledger.settle(h, 1 * USD, f.clock.now()); // balance 0
    await f.ledger.startReview('o', f.clock.now());
    await f.ledger.topup('o', { cash_micro_usd: 0 }, f.clock.now());
    assert.equal((await f.ledger.snapshot('o', f.clock.now())).pausedReason, 'account_under_review', 'review takes precedence');
    const s = await f.ledger.endReview('o', f.clock.now());
    // The review is over; what is left is the balance at zero, shown as admission will refuse it.
    assert.equal(s.serving, 'paused');
    assert.equal(s.pausedReason, 'insufficient_balance');
    assert.deepEqual(await admit(f, 'o', 1), { ok: false, code: 'insufficient_balance' });
    await f.ledger.topup('o', { cash_micro_usd: 5 * USD }, f.clock.now());
    assert.ok((await admit(f, 'o', 1)).ok);
  });

  test('a top-up does not end a review', async () => {
    await fundedOrg(f, 'o', 1 * USD);
    await f.ledger.startReview('o', f.clock.now());
    await f.ledger.topup('o', { cash_micro_usd: 5 * USD }, f.clock.now());
    assert.deepEqual(await admit(f, 'o', 1), { ok: false, code: 'account_under_review' });
  });

  test('concurrency overrun: 429 rate_limit_exceeded with retryAfterS, no pause', async () => {
    await fundedOrg(f, 'o', 100 * USD); // week 1: concurrency 4
    const holds: string[] = [];
    for (let i = 0; i < 4; i++) holds.push(okHold(await admit(f, 'o', 1000)));
    assert.deepEqual(await admit(f, 'o', 1000), { ok: false, code: 'rate_limit_exceeded', retryAfterS: 1 });
    const s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.serving, 'ok');
    assert.equal(s.inFlight, 4);
    assert.equal(s.reservedMicroUsd, 4000);
    await f.ledger.settle(holds[0], 10, f.clock.now());
    assert.ok((await admit(f, 'o', 1000)).ok);
  });

  test('shared pool overrun: 429 rate_limit_exceeded until the window frees, no pause, shared by orgs', async () => {
    await fundedOrg(f, 'a', 100 * USD);
    await fundedOrg(f, 'b', 100 * USD);
    const t0 = Math.floor(f.clock.now() / 60_000) * 60_000; // the clock starts on a minute boundary
    f.clock.set(t0 + 15_500);
    for (const org of ['a', 'b', 'a']) {
      const h = okHold(await admit(f, org, 10, 'cloud_a'));
      await f.ledger.settle(h, 10, f.clock.now());
    }
    assert.deepEqual(await admit(f, 'b', 10, 'cloud_a'), { ok: false, code: 'rate_limit_exceeded', retryAfterS: 45 });
    assert.ok((await admit(f, 'b', 10, 'vendor_a')).ok, 'another pool is unaffected');
    const s = await f.ledger.snapshot('b', f.clock.now());
    assert.equal(s.serving, 'ok');
    assert.deepEqual(s.rates, [
      { name: 'direct', scope: 'pool', window_seconds: 60, limit: 1000, used: 1 },
      { name: 'cloud', scope: 'pool', window_seconds: 60, limit: 3, used: 3 },
    ]);
    f.clock.set(t0 + 59_999);
    assert.deepEqual(await admit(f, 'b', 10, 'cloud_a'), { ok: false, code: 'rate_limit_exceeded', retryAfterS: 1 });
    f.clock.set(t0 + 60_000);
    assert.ok((await admit(f, 'b', 10, 'cloud_a')).ok);
    assert.equal((await f.ledger.snapshot('b', f.clock.now())).rates[1].used, 1);
  });

  test('a route in no pool is unlimited', async () => {
    const g = await adapter.fixture({ ...fixtureConfigWithoutPools() });
    try {
      await g.ledger.ensureOrg('o', g.clock.now());
      await g.ledger.topup('o', { cash_micro_usd: 100 * USD }, g.clock.now());
      for (let i = 0; i < 10; i++) {
        const h = okHold(await g.ledger.admit({ orgId: 'o', holdMicroUsd: 1, route: 'cloud_b', nowMs: g.clock.now() }));
        await g.ledger.settle(h, 1, g.clock.now());
      }
      assert.deepEqual((await g.ledger.snapshot('o', g.clock.now())).rates, []);
    } finally {
      await g.close();
    }
  });

  function fixtureConfigWithoutPools() {
    return { ramp: [{ week: 0, concurrency: 100, daily_spend_micro_usd: 1000 * USD }], hold_lease_ms: 1000, pools: [] };
  }

  test('ramp week follows injected time: 0 before any cash top-up, then 1, 2, …, last step past the end', async () => {
    await f.ledger.ensureOrg('o', f.clock.now());
    await f.ledger.topup('o', { credit_micro_usd: 5 * USD }, f.clock.now()); // promo credit: still week 0
    let s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.rampWeek, 0);
    assert.deepEqual(s.rampDefaults, { concurrency: 2, daily_spend_micro_usd: 1 * USD });
    assert.equal(s.concurrencyLimit, 2);
    assert.equal(s.dailyLimitMicroUsd, 1 * USD);
    assert.equal(s.binding, 'daily_spend');
    assert.equal(s.spendRemainingMicroUsd, 1 * USD);

    const t0 = f.clock.now();
    await f.ledger.topup('o', { cash_micro_usd: 100 * USD }, t0);
    const week = (ms: number) => f.ledger.snapshot('o', ms);
    assert.equal((await week(t0)).rampWeek, 1);
    assert.equal((await week(t0)).dailyLimitMicroUsd, 10 * USD);
    assert.equal((await week(t0 + 7 * DAY - 1)).rampWeek, 1);
    assert.equal((await week(t0 + 7 * DAY)).rampWeek, 2);
    assert.equal((await week(t0 + 7 * DAY)).concurrencyLimit, 8);
    assert.equal((await week(t0 + 14 * DAY)).rampWeek, 3);
    assert.equal((await week(t0 + 14 * DAY)).concurrencyLimit, 8, 'a week between steps keeps the earlier step');
    assert.equal((await week(t0 + 21 * DAY)).rampWeek, 4);
    assert.deepEqual((await week(t0 + 21 * DAY)).rampDefaults, { concurrency: 16, daily_spend_micro_usd: 200 * USD });
    assert.equal((await week(t0 + 700 * DAY)).rampWeek, 101);
    assert.deepEqual((await week(t0 + 700 * DAY)).rampDefaults, { concurrency: 16, daily_spend_micro_usd: 200 * USD });

    // A later top-up does not restart the schedule.
    await f.ledger.topup('o', { cash_micro_usd: 1 }, t0 + 8 * DAY);
    assert.equal((await week(t0 + 8 * DAY)).rampWeek, 2);
  });

  test('week 0 ceilings are enforced on a credit-only account', async () => {
    await f.ledger.ensureOrg('o', f.clock.now());
    await f.ledger.topup('o', { credit_micro_usd: 5 * USD }, f.clock.now());
    okHold(await admit(f, 'o', 1));
    okHold(await admit(f, 'o', 1));
    assert.deepEqual(await admit(f, 'o', 1), { ok: false, code: 'rate_limit_exceeded', retryAfterS: 1 }); // concurrency 2
  });

  test('the ramp moving to a higher week lifts spend_velocity_exceeded (a raised ceiling)', async () => {
    await fundedOrg(f, 'o', 1000 * USD);
    const t0 = f.clock.now();
    f.clock.set(t0 + 7 * DAY - 60_000); // last minute of week 1 (ceiling 10 USD)
    const h = okHold(await admit(f, 'o', 10 * USD));
    await f.ledger.settle(h, 10 * USD, f.clock.now());
    assert.equal((await admit(f, 'o', 1) as { code: string }).code, 'spend_velocity_exceeded');
    f.clock.set(t0 + 7 * DAY); // week 2 (50 USD), same UTC day
    assert.equal(Math.floor((t0 + 7 * DAY) / DAY), Math.floor((t0 + 7 * DAY - 60_000) / DAY));
    assert.ok((await admit(f, 'o', 1)).ok);
  });

  test('overrides replace the schedule; null clears them back to it', async () => {
    await fundedOrg(f, 'o', 100 * USD);
    let s = await f.ledger.setOverrides('o', { concurrency: 1, daily_spend_micro_usd: 3 * USD }, f.clock.now());
    assert.deepEqual(s.overrideInForce, { concurrency: true, daily_spend: true });
    assert.deepEqual(s.rampDefaults, { concurrency: 4, daily_spend_micro_usd: 10 * USD });
    assert.equal(s.concurrencyLimit, 1);
    assert.equal(s.dailyLimitMicroUsd, 3 * USD);
    const h = okHold(await admit(f, 'o', 1));
    assert.deepEqual(await admit(f, 'o', 1), { ok: false, code: 'rate_limit_exceeded', retryAfterS: 1 });
    await f.ledger.settle(h, 1, f.clock.now());

    s = await f.ledger.setOverrides('o', { concurrency: null }, f.clock.now()); // daily override untouched
    assert.deepEqual(s.overrideInForce, { concurrency: false, daily_spend: true });
    assert.equal(s.concurrencyLimit, 4);
    assert.equal(s.dailyLimitMicroUsd, 3 * USD);
    s = await f.ledger.setOverrides('o', { daily_spend_micro_usd: null }, f.clock.now());
    assert.deepEqual(s.overrideInForce, { concurrency: false, daily_spend: false });
    assert.equal(s.dailyLimitMicroUsd, 10 * USD);
    // An override of 0 is a real figure, not "unset".
    s = await f.ledger.setOverrides('o', { daily_spend_micro_usd: 0 }, f.clock.now());
    assert.equal(s.dailyLimitMicroUsd, 0);
    assert.equal((await admit(f, 'o', 1) as { code: string }).code, 'spend_velocity_exceeded');
  });

  test('exempt: no daily or concurrency ceiling, balance still applies, header = balance', async () => {
    await fundedOrg(f, 'o', 100 * USD);
    let s = await f.ledger.setExempt('o', true, f.clock.now());
    assert.equal(s.binding, 'exempt');
    assert.equal(s.rampWeek, null);
    assert.equal(s.rampDefaults, null);
    assert.equal(s.overrideInForce, null);
    assert.equal(s.dailyLimitMicroUsd, Number.MAX_SAFE_INTEGER);
    assert.equal(s.concurrencyLimit, Number.MAX_SAFE_INTEGER);
    for (let i = 0; i < 8; i++) {
      const r = await admit(f, 'o', 5 * USD); // 40 USD held, way past week 1's 10 USD and 4 in flight
      assert.ok(r.ok);
      assert.equal(r.exempt, true);
      assert.equal(r.spendRemainingMicroUsd, 100 * USD);
    }
    s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.inFlight, 8);
    assert.equal(s.spendRemainingMicroUsd, 100 * USD);

    const g = await f.ledger.topup('o', { cash_micro_usd: 0 }, f.clock.now());
    assert.equal(g.serving, 'ok');
    await f.ledger.ensureOrg('broke', f.clock.now());
    await f.ledger.setExempt('broke', true, f.clock.now());
    assert.deepEqual(await admit(f, 'broke', 1), { ok: false, code: 'insufficient_balance' });
  });

  test('marking exempt lifts spend_velocity_exceeded; a review still shows as paused', async () => {
    await fundedOrg(f, 'o', 100 * USD);
    okHold(await admit(f, 'o', 10 * USD));
    assert.equal((await admit(f, 'o', 1) as { code: string }).code, 'spend_velocity_exceeded');
    assert.equal((await f.ledger.setExempt('o', true, f.clock.now())).serving, 'ok');
    assert.ok((await admit(f, 'o', 1)).ok);
    const s = await f.ledger.startReview('o', f.clock.now());
    assert.equal(s.binding, 'paused');
  });

  test('snapshot spendRemaining equals the header of a request admitted at that moment', async () => {
    await fundedOrg(f, 'o', 7 * USD, 2 * USD);
    for (const hold of [1 * USD, 3 * USD, 2 * USD]) {
      const s = await f.ledger.snapshot('o', f.clock.now());
      const r = await admit(f, 'o', hold);
      assert.ok(r.ok);
      assert.equal(r.spendRemainingMicroUsd, s.spendRemainingMicroUsd);
      assert.equal(r.asOfMs, s.asOfMs);
    }
    const s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.binding, 'daily_spend'); // 10 − 6 = 4 < balance 9
    assert.equal(s.spendRemainingMicroUsd, 4 * USD);
  });

  test('binding is balance when the balance is nearer than the daily ceiling', async () => {
    await fundedOrg(f, 'o', 2 * USD, 1 * USD);
    const s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.binding, 'balance');
    assert.equal(s.spendRemainingMicroUsd, 3 * USD);
    assert.equal(s.cashMicroUsd, 2 * USD);
    assert.equal(s.creditMicroUsd, 1 * USD);
  });

  test('unknown organizations throw in every method but ensureOrg', async () => {
    const now = f.clock.now();
    const l = f.ledger;
    for (const call of [
      () => l.admit({ orgId: 'nope', holdMicroUsd: 1, route: 'vendor_a', nowMs: now }),
      () => l.topup('nope', { cash_micro_usd: 1 }, now),
      () => l.setOverrides('nope', { concurrency: 1 }, now),
      () => l.startReview('nope', now),
      () => l.endReview('nope', now),
      () => l.setExempt('nope', true, now),
      () => l.snapshot('nope', now),
      () => l.entries('nope', 10),
    ]) await assert.rejects(call, /unknown organization "nope"/);
    await l.ensureOrg('nope', now);
    await l.ensureOrg('nope', now); // idempotent
    assert.equal((await l.snapshot('nope', now)).cashMicroUsd, 0);
  });

  test('amounts must be integers >= 0', async () => {
    await fundedOrg(f, 'o', 10 * USD);
    const now = f.clock.now();
    await assert.rejects(() => f.ledger.topup('o', { cash_micro_usd: 1.5 }, now), /integer/);
    await assert.rejects(() => f.ledger.topup('o', { credit_micro_usd: -1 }, now), /integer/);
    await assert.rejects(() => f.ledger.admit({ orgId: 'o', holdMicroUsd: 0.1, route: 'vendor_a', nowMs: now }), /integer/);
    await assert.rejects(() => f.ledger.setOverrides('o', { daily_spend_micro_usd: 2.5 }, now), /integer/);
    const h = okHold(await admit(f, 'o', 10));
    await assert.rejects(() => f.ledger.settle(h, 0.5, now), /integer/);
    await assert.rejects(() => f.ledger.settle(h, -3, now), /integer/);
    await assert.rejects(() => f.ledger.settle('unknown', Number.NaN, now), /integer/);
    assert.equal((await f.ledger.snapshot('o', now)).cashMicroUsd, 10 * USD);
  });

  test('top-ups past 2^53 − 1 micro-USD: checked in the transaction, so of two concurrent ones only one lands', async () => {
    const MAX = Number.MAX_SAFE_INTEGER;
    await f.ledger.ensureOrg('o', f.clock.now());
    await f.ledger.topup('o', { cash_micro_usd: MAX - 10 }, f.clock.now());
    const results = await Promise.allSettled([
      f.ledger.topup('o', { cash_micro_usd: 6 }, f.clock.now()),
      f.ledger.topup('o', { credit_micro_usd: 6 }, f.clock.now()),
    ]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    assert.ok(refused.reason instanceof BalanceOverflowError, String(refused.reason));
    const s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.cashMicroUsd + s.creditMicroUsd, MAX - 4);
    assert.equal((await f.ledger.entries('o', 10)).filter((e: any) => e.kind === 'topup').length, 2);
  });
});
