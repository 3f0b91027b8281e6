// Settlement (cash first, then credit; negative balance; idempotence; today's spend) and leases,
// the contract suite run once per adapter (SQLite, PostgreSQL).
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { debit } from '../../lib/ledger/rules.ts';
import { adapters, fundedOrg, admit, okHold, CONFIG, USD, DAY, type Fixture } from './helpers.ts';

for (const adapter of await adapters('settlement')) describe(adapter.name, () => {
  let f: Fixture;
  before(() => adapter.setup());
  after(() => adapter.teardown());
  beforeEach(async () => { f = await adapter.fixture(); });
  afterEach(() => f.close());

  test('debit: cash first, then credit, then cash goes negative', async () => {
    assert.deepEqual(debit(10, 5, 4), { cash: 6, credit: 5 });
    assert.deepEqual(debit(10, 5, 12), { cash: 0, credit: 3 });
    assert.deepEqual(debit(10, 5, 15), { cash: 0, credit: 0 });
    assert.deepEqual(debit(10, 5, 18), { cash: -3, credit: 0 });
    assert.deepEqual(debit(-2, 5, 3), { cash: -2, credit: 2 }, 'owed cash stays, credit pays');
    assert.deepEqual(debit(-2, 0, 3), { cash: -5, credit: 0 });
    assert.deepEqual(debit(0, 0, 0), { cash: 0, credit: 0 });
  });

  test('settle debits cash first, then credit, and logs the split', async () => {
    await fundedOrg(f, 'o', 3 * USD, 2 * USD);
    const now = f.clock.now();
    await f.ledger.settle(okHold(await admit(f, 'o', 1 * USD)), 2 * USD, now);
    let s = await f.ledger.snapshot('o', now);
    assert.deepEqual([s.cashMicroUsd, s.creditMicroUsd], [1 * USD, 2 * USD]);
    await f.ledger.settle(okHold(await admit(f, 'o', 1 * USD)), 2 * USD, now);
    s = await f.ledger.snapshot('o', now);
    assert.deepEqual([s.cashMicroUsd, s.creditMicroUsd], [0, 1 * USD]);
    const last = (await f.ledger.entries('o', 1))[0];
    assert.equal(last.kind, 'settle');
    assert.equal(last.amount_micro_usd, 2 * USD);
    assert.equal(last.cash_micro_usd, -1 * USD);
    assert.equal(last.credit_micro_usd, -1 * USD);
  });

  test('a settlement may take the balance negative; the next admission pauses insufficient_balance', async () => {
    await fundedOrg(f, 'o', 1 * USD, 1 * USD);
    const now = f.clock.now();
    const h = okHold(await admit(f, 'o', 500_000));
    await f.ledger.settle(h, 3_250_000, now);
    const s = await f.ledger.snapshot('o', now);
    assert.deepEqual([s.cashMicroUsd, s.creditMicroUsd], [-1_250_000, 0]);
    // Admission stores the pause; the snapshot shows it already, before any request is refused.
    assert.equal(s.serving, 'paused');
    assert.equal(s.pausedReason, 'insufficient_balance');
    assert.equal(s.spendRemainingMicroUsd, -1_250_000);
    assert.equal(s.binding, 'paused');
    assert.deepEqual(await admit(f, 'o', 1), { ok: false, code: 'insufficient_balance' });
    assert.equal((await f.ledger.snapshot('o', now)).serving, 'paused');
  });

  test('settle is idempotent per hold; unknown holds are a no-op', async () => {
    await fundedOrg(f, 'o', 10 * USD);
    const now = f.clock.now();
    const h = okHold(await admit(f, 'o', 1 * USD));
    await f.ledger.settle(h, 700_000, now);
    await f.ledger.settle(h, 700_000, now);
    await f.ledger.settle(h, 5 * USD, now);
    await f.ledger.settle('no-such-hold', 1 * USD, now);
    const s = await f.ledger.snapshot('o', now);
    assert.equal(s.cashMicroUsd, 9_300_000);
    assert.equal(s.dailyUsedMicroUsd, 700_000);
    assert.equal(s.inFlight, 0);
    assert.equal(s.reservedMicroUsd, 0);
    assert.equal((await f.ledger.entries('o', 100)).filter((e) => e.kind === 'settle').length, 1);
  });

  test("today's spend: settled today + every live hold, also one placed yesterday; a settlement counts on the day it settles", async () => {
    await fundedOrg(f, 'o', 100 * USD);
    const midnight = (Math.floor(f.clock.now() / DAY) + 1) * DAY;
    f.clock.set(midnight - 10_000);
    const settled = okHold(await admit(f, 'o', 2 * USD));
    await f.ledger.settle(settled, 1 * USD, f.clock.now());
    const open = okHold(await admit(f, 'o', 3 * USD));
    let s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.dailyUsedMicroUsd, 4 * USD);
    assert.equal(s.reservedMicroUsd, 3 * USD);

    f.clock.set(midnight + 1_000);
    s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.dailyUsedMicroUsd, 3 * USD, "yesterday's hold is in flight today: it counts against today");
    assert.equal(s.reservedMicroUsd, 3 * USD);
    assert.equal(s.inFlight, 1);
    await f.ledger.settle(open, 2_500_000, f.clock.now());
    s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.dailyUsedMicroUsd, 2_500_000);
    assert.equal(s.cashMicroUsd, 100 * USD - 3_500_000);
  });

  test('holds open across UTC midnight cannot overspend the new day: as many admitted as when all are placed after it', async () => {
    // Ceiling 10 USD (ramp week 1), holds of 6 USD each settling at 6 USD. The first hold placed
    // 5 s before midnight or 1 s after, the next three 5 s after: the same two admitted, 12 USD.
    const midnight = (Math.floor(f.clock.now() / DAY) + 1) * DAY;
    for (const [org, firstAt] of [['before', midnight - 5_000], ['after', midnight + 1_000]] as const) {
      await fundedOrg(f, org, 100 * USD);
      f.clock.set(firstAt);
      const results = [await admit(f, org, 6 * USD)];
      f.clock.set(midnight + 5_000);
      for (let i = 0; i < 3; i++) results.push(await admit(f, org, 6 * USD));
      assert.deepEqual(results.map((r) => (r.ok ? 'ok' : r.code)),
        ['ok', 'ok', 'spend_velocity_exceeded', 'spend_velocity_exceeded'], `first hold ${org} midnight`);
      f.clock.set(midnight + 10_000);
      for (const r of results) if (r.ok) await f.ledger.settle(r.holdId, 6 * USD, f.clock.now());
      assert.equal((await f.ledger.snapshot(org, f.clock.now())).dailyUsedMicroUsd, 12 * USD, `first hold ${org} midnight`);
    }
  });

  test('lease expiry releases a hold without charge, logged; renew keeps it alive', async () => {
    await fundedOrg(f, 'o', 10 * USD);
    const t0 = f.clock.now();
    const kept = okHold(await admit(f, 'o', 1 * USD));
    const dead = okHold(await admit(f, 'o', 2 * USD));
    await f.ledger.renew([{ holdId: kept, deliveredMicroUsd: 0 }, { holdId: 'unknown', deliveredMicroUsd: 5 }], t0 + 20_000); // lease now t0 + 50 000
    assert.deepEqual(await f.ledger.expireLeases(t0 + 29_999), []);
    assert.deepEqual(await f.ledger.expireLeases(t0 + 30_000), [{ holdId: dead, orgId: 'o', amountMicroUsd: 2 * USD, chargedMicroUsd: 0 }]);
    assert.deepEqual(await f.ledger.expireLeases(t0 + 30_000), [], 'released once');
    const s = await f.ledger.snapshot('o', t0 + 30_000);
    assert.equal(s.inFlight, 1);
    assert.equal(s.reservedMicroUsd, 1 * USD);
    assert.equal(s.cashMicroUsd, 10 * USD, 'no charge');
    assert.equal(s.dailyUsedMicroUsd, 1 * USD);
    const e = (await f.ledger.entries('o', 10)).find((x) => x.kind === 'lease_expired');
    assert.deepEqual(e && { hold: e.hold_id, amount: e.amount_micro_usd, at: e.at_ms }, { hold: dead, amount: 2 * USD, at: t0 + 30_000 });
    await f.ledger.settle(kept, 400_000, t0 + 40_000);
    assert.equal((await f.ledger.snapshot('o', t0 + 40_000)).inFlight, 0);
  });

  test('a hold whose lease ran out stops counting at once, and admission releases it', async () => {
    await fundedOrg(f, 'o', 10 * USD); // concurrency 4
    const t0 = f.clock.now();
    for (let i = 0; i < 4; i++) okHold(await admit(f, 'o', 1000));
    assert.equal((await admit(f, 'o', 1000) as { code: string }).code, 'rate_limit_exceeded');
    f.clock.set(t0 + 30_000);
    assert.equal((await f.ledger.snapshot('o', f.clock.now())).inFlight, 0);
    assert.ok((await admit(f, 'o', 1000)).ok);
    assert.equal((await f.ledger.entries('o', 100)).filter((e) => e.kind === 'lease_expired').length, 4);
    assert.deepEqual(await f.ledger.expireLeases(f.clock.now()), []);
  });

  test('a late settle after lease expiry still charges the real cost, once', async () => {
    await fundedOrg(f, 'o', 10 * USD);
    const t0 = f.clock.now();
    const h = okHold(await admit(f, 'o', 1 * USD));
    await f.ledger.expireLeases(t0 + 60_000);
    await f.ledger.renew([{ holdId: h, deliveredMicroUsd: 0 }], t0 + 60_001); // too late: no revival
    assert.equal((await f.ledger.snapshot('o', t0 + 60_001)).inFlight, 0);
    await f.ledger.settle(h, 300_000, t0 + 61_000);
    await f.ledger.settle(h, 300_000, t0 + 62_000);
    const s = await f.ledger.snapshot('o', t0 + 62_000);
    assert.equal(s.cashMicroUsd, 9_700_000);
    assert.equal(s.inFlight, 0);
    assert.equal((await f.ledger.entries('o', 1))[0].kind, 'settle_after_expiry');
  });

  test('a lapsed hold is charged the output its last renewal recorded; a late settle charges only the rest, never twice', async () => {
    await fundedOrg(f, 'o', 10 * USD, 1_000);
    const t0 = f.clock.now();
    const h = okHold(await admit(f, 'o', 1 * USD));
    const quiet = okHold(await admit(f, 'o', 1 * USD));
    await f.ledger.renew([{ holdId: h, deliveredMicroUsd: 120_000 }], t0 + 10_000);       // lease now t0 + 40 000
    await f.ledger.renew([{ holdId: h, deliveredMicroUsd: 250_000 }], t0 + 20_000);       // lease now t0 + 50 000
    assert.deepEqual(await f.ledger.expireLeases(t0 + 30_000), [{ holdId: quiet, orgId: 'o', amountMicroUsd: 1 * USD, chargedMicroUsd: 0 }]);
    assert.deepEqual(await f.ledger.expireLeases(t0 + 50_000), [{ holdId: h, orgId: 'o', amountMicroUsd: 1 * USD, chargedMicroUsd: 250_000 }]);
    let s = await f.ledger.snapshot('o', t0 + 50_000);
    assert.equal(s.cashMicroUsd, 10 * USD - 250_000, 'charged at the last renewal, cash first');
    assert.equal(s.creditMicroUsd, 1_000);
    assert.equal(s.dailyUsedMicroUsd, 250_000);
    assert.equal(s.inFlight, 0);
    const e = (await f.ledger.entries('o', 10)).find((x) => x.kind === 'lease_expired' && x.hold_id === h)!;
    assert.deepEqual([e.amount_micro_usd, e.cash_micro_usd, e.charged_micro_usd], [1 * USD, -250_000, 250_000]);
    await f.ledger.settle(h, 400_000, t0 + 51_000);    // the slow process was alive after all
    await f.ledger.settle(h, 400_000, t0 + 52_000);    // replay: no-op
    s = await f.ledger.snapshot('o', t0 + 52_000);
    assert.equal(s.cashMicroUsd, 10 * USD - 400_000, 'the real cost in all, once');
    assert.equal((await f.ledger.entries('o', 1))[0].amount_micro_usd, 150_000);
    f.clock.set(t0 + 52_000);
    const g = okHold(await admit(f, 'o', 1 * USD));
    await f.ledger.renew([{ holdId: g, deliveredMicroUsd: 90_000 }], t0 + 60_000);
    await f.ledger.expireLeases(t0 + 90_000);
    await f.ledger.settle(g, 50_000, t0 + 91_000);     // real cost under the lapse charge: nothing more, no refund
    assert.equal((await f.ledger.snapshot('o', t0 + 91_000)).cashMicroUsd, 10 * USD - 400_000 - 90_000);
  });

  test('a restarted instance releases its predecessor\'s holds at once (charged as delivered); other instances\' and its own are untouched', async () => {
    await fundedOrg(f, 'o', 10 * USD);
    await f.ledger.setOverrides('o', { concurrency: 100 }, f.clock.now());
    const t0 = f.clock.now();
    const [a1, a2, b] = [await f.reopen(CONFIG, { instanceId: 'host:8081', processId: 'p1' }), await f.reopen(CONFIG, { instanceId: 'host:8081', processId: 'p2' }), await f.reopen(CONFIG, { instanceId: 'host:8082', processId: 'p3' })];
    const on = async (l: typeof a1.ledger) => okHold(await l.admit({ orgId: 'o', holdMicroUsd: 100_000, route: 'vendor_a', nowMs: t0 }));
    const dead = [await on(a1.ledger), await on(a1.ledger)];
    const other = await on(b.ledger);
    await a1.ledger.renew([{ holdId: dead[0]!, deliveredMicroUsd: 7_000 }], t0 + 1_000);
    const mine = await on(a2.ledger);                                              // the new process admitted before sweeping
    const released = await a2.ledger.releasePredecessors(t0 + 2_000);              // well within every lease
    assert.deepEqual(released.map((r) => [r.holdId, r.chargedMicroUsd]).sort(), [[dead[0], 7_000], [dead[1], 0]].sort());
    assert.deepEqual(await a2.ledger.releasePredecessors(t0 + 2_000), [], 'once');
    const s = await f.ledger.snapshot('o', t0 + 2_000);
    assert.equal(s.inFlight, 2, 'the other instance\'s hold and the new process\'s own stay');
    assert.equal(s.cashMicroUsd, 10 * USD - 7_000);
    await b.ledger.settle(other, 1, t0 + 3_000);
    await a2.ledger.settle(mine, 1, t0 + 3_000);
    assert.equal((await f.ledger.snapshot('o', t0 + 3_000)).inFlight, 0);
  });

  test('settle of zero releases the hold and adds nothing to the day', async () => {
    await fundedOrg(f, 'o', 10 * USD);
    const h = okHold(await admit(f, 'o', 1 * USD));
    await f.ledger.settle(h, 0, f.clock.now());
    const s = await f.ledger.snapshot('o', f.clock.now());
    assert.equal(s.dailyUsedMicroUsd, 0);
    assert.equal(s.inFlight, 0);
    assert.equal(s.cashMicroUsd, 10 * USD);
  });
});
