// Settlement (cash first, then credit; negative balance; idempotence; today's spend) and leases,
// the contract suite run once per adapter (SQLite, PostgreSQL).
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { debit } from '../../lib/ledger/rules.ts';
import { adapters, fundedOrg, admit, okHold, deadPid, livePid, CONFIG, USD, DAY, type Fixture } from './helpers.ts';

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
    await f.ledger.settle(g, 50_000, t0 + 91_000);     // real cost under the lapse charge: the difference given back
    assert.equal((await f.ledger.snapshot('o', t0 + 91_000)).cashMicroUsd, 10 * USD - 400_000 - 50_000);
  });

  test('a late settlement below the lapse charge gives the difference back: the real cost is final, in cash, credit, the day and the entries', async () => {
    // Cash 300 000 and credit 1 USD: the lapse of 500 000 takes all the cash and 200 000 of credit.
    await fundedOrg(f, 'o', 300_000, 1 * USD);
    const t0 = f.clock.now();
    const h = okHold(await admit(f, 'o', 1 * USD));
    await f.ledger.renew([{ holdId: h, deliveredMicroUsd: 500_000 }], t0 + 10_000);
    assert.equal((await f.ledger.expireLeases(t0 + 40_000))[0]?.chargedMicroUsd, 500_000);
    let s = await f.ledger.snapshot('o', t0 + 40_000);
    assert.deepEqual([s.cashMicroUsd, s.creditMicroUsd, s.dailyUsedMicroUsd], [0, 800_000, 500_000]);
    await f.ledger.settle(h, 350_000, t0 + 41_000);    // its owner was alive: the provider's cost
    await f.ledger.settle(h, 350_000, t0 + 42_000);    // replay: no-op
    s = await f.ledger.snapshot('o', t0 + 42_000);
    // As a settlement on time would have left it: 350 000 taken, cash first, then credit.
    assert.deepEqual([s.cashMicroUsd, s.creditMicroUsd, s.dailyUsedMicroUsd, s.inFlight], [0, 950_000, 350_000, 0]);
    const entries = (await f.ledger.entries('o', 10)).filter((e) => e.hold_id === h);
    assert.deepEqual(entries.map((e) => [e.kind, e.amount_micro_usd, e.cash_micro_usd, e.credit_micro_usd]), [
      ['settle_after_expiry', -150_000, 0, 150_000],
      ['lease_expired', 1 * USD, -300_000, -200_000],
    ]);
    assert.equal(entries[0]!.cost_micro_usd, 350_000);
    const moved = entries.reduce((sum, e) => sum + (e.cash_micro_usd as number) + (e.credit_micro_usd as number), 0);
    assert.equal(moved, -350_000, 'the entries move exactly the cost');
  });

  test('a late settlement below the lapse charge first repays what the lapse left owed on cash; across midnight the cost counts on its own day', async () => {
    // Cash 100 000, credit 50 000: a lapse of 200 000 leaves 50 000 owed on cash.
    await fundedOrg(f, 'o', 100_000, 50_000);
    const midnight = (Math.floor(f.clock.now() / DAY) + 1) * DAY;
    f.clock.set(midnight - 40_000);
    const h = okHold(await admit(f, 'o', 1 * USD));
    await f.ledger.renew([{ holdId: h, deliveredMicroUsd: 200_000 }], midnight - 35_000);
    await f.ledger.expireLeases(midnight - 5_000);                            // the lapse, before midnight
    let s = await f.ledger.snapshot('o', midnight - 5_000);
    assert.deepEqual([s.cashMicroUsd, s.creditMicroUsd, s.dailyUsedMicroUsd], [-50_000, 0, 200_000]);
    await f.ledger.settle(h, 120_000, midnight + 5_000);                     // the request ended after it
    s = await f.ledger.snapshot('o', midnight + 5_000);
    assert.deepEqual([s.cashMicroUsd, s.creditMicroUsd], [0, 30_000], 'as debit(120 000) from 100 000 cash and 50 000 credit');
    assert.equal(s.dailyUsedMicroUsd, 120_000, 'the cost counts on the day the request ended');
    assert.equal((await f.ledger.snapshot('o', midnight - 1)).dailyUsedMicroUsd, 0, 'the lapse charge left the day before');
  });

  test('a restarted instance releases its dead predecessor\'s holds at once (charged as delivered); other instances\' and its own are untouched', async () => {
    await fundedOrg(f, 'o', 10 * USD);
    await f.ledger.setOverrides('o', { concurrency: 100 }, f.clock.now());
    const t0 = f.clock.now();
    // p1 ran on this host and its pid is gone (killed); p2 is the restart.
    const [a1, a2, b] = [await f.reopen(CONFIG, { instanceId: 'host:8081', processId: 'p1', pid: deadPid() }), await f.reopen(CONFIG, { instanceId: 'host:8081', processId: 'p2' }), await f.reopen(CONFIG, { instanceId: 'host:8082', processId: 'p3' })];
    for (const l of [a1, b]) await l.ledger.releasePredecessors(t0);           // their starts
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

  test('a start under the instance id of a live process (a second start on its port, a restart while it drains) releases none of its holds: they stay its own and settle at their real cost', async () => {
    await fundedOrg(f, 'o', 100 * USD);
    await f.ledger.setOverrides('o', { concurrency: 1 }, f.clock.now());
    const t0 = f.clock.now();
    const a = (await f.reopen(CONFIG, { instanceId: 'host:8080', processId: 'pA', pid: livePid() })).ledger;
    const c = (await f.reopen(CONFIG, { instanceId: 'host:8081', processId: 'pC' })).ledger;
    await a.releasePredecessors(t0);
    const h = okHold(await a.admit({ orgId: 'o', holdMicroUsd: 2 * USD, route: 'vendor_a', nowMs: t0 }));
    await a.renew([{ holdId: h, deliveredMicroUsd: 900_000 }], t0 + 10_000);     // A streaming
    const b = (await f.reopen(CONFIG, { instanceId: 'host:8080', processId: 'pB' })).ledger;
    assert.deepEqual(await b.releasePredecessors(t0 + 12_000), [], 'A is alive on this host');
    assert.deepEqual(await c.admit({ orgId: 'o', holdMicroUsd: 2 * USD, route: 'vendor_a', nowMs: t0 + 12_001 }),
      { ok: false, code: 'rate_limit_exceeded', retryAfterS: 1 }, 'A\'s stream still holds the concurrency');
    await a.renew([{ holdId: h, deliveredMicroUsd: 1 * USD }], t0 + 20_000);
    await a.settle(h, 400_000, t0 + 25_000);
    const s = await f.ledger.snapshot('o', t0 + 25_000);
    assert.deepEqual([s.cashMicroUsd, s.dailyUsedMicroUsd, s.inFlight], [100 * USD - 400_000, 400_000, 0]);
    assert.deepEqual((await f.ledger.entries('o', 10)).filter((e) => e.hold_id === h).map((e) => [e.kind, e.amount_micro_usd]), [['settle', 400_000]]);
  });

  test('a predecessor elsewhere is released at start only once its heartbeat is older than the lease; one that never registered waits for its lease', async () => {
    await fundedOrg(f, 'o', 100 * USD);
    await f.ledger.setOverrides('o', { concurrency: 100 }, f.clock.now());
    const t0 = f.clock.now();
    const admitOn = async (l: Fixture['ledger'], nowMs: number) => okHold(await l.admit({ orgId: 'o', holdMicroUsd: 1_000, route: 'vendor_a', nowMs }));
    // On another host its pid says nothing here (pid 1 lives everywhere): only its heartbeat counts.
    const far = (await f.reopen(CONFIG, { instanceId: 'gw-0', processId: 'far', host: 'another-host', pid: 1 })).ledger;
    await far.releasePredecessors(t0);                                             // registered at its start
    await far.renew([], t0 + 10_000);                                              // its last heartbeat
    const farHold = await admitOn(far, t0 + 25_000);                               // lease until t0 + 55 000
    const old = (await f.reopen(CONFIG, { instanceId: 'gw-0', processId: 'old-build' })).ledger;
    const oldHold = await admitOn(old, t0 + 25_000);                               // never registered
    const next = (await f.reopen(CONFIG, { instanceId: 'gw-0', processId: 'next' })).ledger;
    assert.deepEqual(await next.releasePredecessors(t0 + 39_999), [], 'a heartbeat younger than the lease');
    const released = await next.releasePredecessors(t0 + 40_000);                  // 30 s since its last beat
    assert.deepEqual(released.map((r) => r.holdId), [farHold], 'released at once, its lease still running');
    assert.equal((await f.ledger.snapshot('o', t0 + 40_000)).inFlight, 1, 'the unregistered process\'s hold still counts');
    assert.deepEqual((await f.ledger.expireLeases(t0 + 55_000)).map((r) => r.holdId), [oldHold], 'released by its lease');
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
