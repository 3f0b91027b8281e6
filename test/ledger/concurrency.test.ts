// Atomicity across connections: two connections in one thread, then worker threads with their own
// connections racing on the same file. Also a restart: the file alone carries the whole ledger.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { openSqliteLedger } from '../../lib/ledger/sqlite.ts';
import { LEDGER_SCHEMA_VERSION } from '../../lib/ledger/sqlite-schema.ts';
import { fixture, openDb, deadPid, CONFIG, USD, okHold, type SqliteFixture } from './helpers.ts';

test('two connections interleaved: admitted count and held money are exact at the daily ceiling', async () => {
  const f = fixture();
  try {
    const now = f.clock.now();
    await f.ledger.ensureOrg('o', now);
    await f.ledger.topup('o', { cash_micro_usd: 1000 * USD }, now);
    await f.ledger.setOverrides('o', { concurrency: 1000 }, now); // the daily ceiling (10 USD) binds
    const other = (await f.reopen()).ledger;
    const ledgers = [f.ledger, other];
    const holds: string[] = [];
    const refused: string[] = [];
    for (let i = 0; i < 100; i++) {
      const r = await ledgers[i % 2].admit({ orgId: 'o', holdMicroUsd: 700_000, route: 'vendor_a', nowMs: now });
      if (r.ok) holds.push(r.holdId); else refused.push(r.code);
    }
    // Admitted while used < 10 USD: 0, 0.7, …, 9.8 → 15 holds (the last may overshoot by its hold).
    assert.equal(holds.length, 15);
    assert.ok(refused.every((c) => c === 'spend_velocity_exceeded'));
    for (const l of ledgers) {
      const s = await l.snapshot('o', now);
      assert.equal(s.reservedMicroUsd, 15 * 700_000);
      assert.equal(s.dailyUsedMicroUsd, 15 * 700_000);
      assert.equal(s.inFlight, 15);
      assert.equal(s.pausedReason, 'spend_velocity_exceeded');
    }
    for (const [i, h] of holds.entries()) await ledgers[i % 2].settle(h, 600_000, now);
    for (const [i, h] of holds.entries()) await ledgers[(i + 1) % 2].settle(h, 600_000, now); // replays: no-ops
    const s = await other.snapshot('o', now);
    assert.equal(s.cashMicroUsd, 1000 * USD - 15 * 600_000);
    assert.equal(s.dailyUsedMicroUsd, 15 * 600_000);
    assert.equal(s.inFlight, 0);
  } finally {
    await f.close();
  }
});

const WORKER_URL = new URL('./admit-worker.ts', import.meta.url).href;
const TSX_API_URL = import.meta.resolve('tsx/esm/api');

function race(file: string, workers: number, data: Record<string, unknown>): Promise<Array<{ admitted: string[]; refused: Record<string, number> }>> {
  const barrier = new SharedArrayBuffer(8);
  const flag = new Int32Array(barrier);
  const runs = Array.from({ length: workers }, () => new Promise<{ admitted: string[]; refused: Record<string, number> }>((resolve, reject) => {
    // Node 20 does not apply `--import tsx` to a worker's entry, so a tiny ESM entry registers
    // tsx inside the worker first and then imports the TypeScript file.
    const entry = `import { register } from ${JSON.stringify(TSX_API_URL)}; register(); await import(${JSON.stringify(WORKER_URL)});`;
    const w = new Worker(new URL(`data:text/javascript,${encodeURIComponent(entry)}`), { workerData: { file, barrier, ...data } });
    w.once('message', resolve);
    w.once('error', reject);
  }));
  const release = setInterval(() => {
    if (Atomics.load(flag, 1) === workers) {
      clearInterval(release);
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    }
  }, 5);
  return Promise.all(runs).finally(() => clearInterval(release));
}

test('worker threads racing on one file: never more admitted than the ceiling allows', async () => {
  const f = fixture();
  try {
    const now = f.clock.now();
    await f.ledger.ensureOrg('o', now);
    await f.ledger.topup('o', { cash_micro_usd: 1000 * USD }, now);
    await f.ledger.setOverrides('o', { concurrency: 10_000, daily_spend_micro_usd: 50 * USD }, now);
    const results = await race(f.file, 4, { orgId: 'o', attempts: 60, hold: 300_000, settleCost: null, nowMs: now });
    const admitted = results.flatMap((r) => r.admitted);
    // used < 50 USD at each admission: 0, 0.3, …, 49.8 → ceil(50 / 0.3) = 167 holds.
    assert.equal(admitted.length, 167);
    assert.equal(new Set(admitted).size, 167);
    const refusedVelocity = results.reduce((n, r) => n + (r.refused.spend_velocity_exceeded ?? 0), 0);
    assert.equal(refusedVelocity, 4 * 60 - 167);
    const s = await f.ledger.snapshot('o', now);
    assert.equal(s.reservedMicroUsd, 167 * 300_000);
    assert.equal(s.inFlight, 167);
    assert.equal(s.cashMicroUsd, 1000 * USD);
  } finally {
    await f.close();
  }
});

test('worker threads admitting and settling against a balance: money is conserved exactly', async () => {
  const f = fixture();
  try {
    const now = f.clock.now();
    await f.ledger.ensureOrg('o', now);
    await f.ledger.topup('o', { cash_micro_usd: 6 * USD, credit_micro_usd: 4 * USD }, now);
    await f.ledger.setOverrides('o', { concurrency: 10_000, daily_spend_micro_usd: 1_000 * USD }, now);
    const workers = 4;
    const results = await race(f.file, workers, { orgId: 'o', attempts: 50, hold: 100_000, settleCost: 130_000, nowMs: now });
    const admitted = results.flatMap((r) => r.admitted).length;
    // Each admission saw balance > 0; holds are not subtracted from the balance (spec), so each
    // worker can overshoot by at most its one request admitted before the last settlement landed.
    const exact = Math.ceil((10 * USD) / 130_000); // 77 when admissions and settlements alternate
    assert.ok(admitted >= exact && admitted <= exact + workers - 1, `admitted ${admitted}`);
    const s = await f.ledger.snapshot('o', now);
    assert.equal(s.cashMicroUsd + s.creditMicroUsd, 10 * USD - admitted * 130_000);
    assert.equal(s.creditMicroUsd, 0);
    assert.equal(s.dailyUsedMicroUsd, admitted * 130_000);
    assert.equal(s.inFlight, 0);
    assert.equal(s.pausedReason, 'insufficient_balance');
    const settles = (await f.ledger.entries('o', 10_000)).filter((e) => e.kind === 'settle');
    assert.equal(settles.length, admitted);
    assert.equal(settles.reduce((n, e) => n + (e.amount_micro_usd as number), 0), admitted * 130_000);
  } finally {
    await f.close();
  }
});

test('restart: closing and reopening from the file keeps balances, spend, holds and state', async () => {
  const f = fixture();
  try {
    const now = f.clock.now();
    await f.ledger.ensureOrg('o', now);
    await f.ledger.topup('o', { cash_micro_usd: 20 * USD, credit_micro_usd: 3 * USD }, now);
    await f.ledger.setOverrides('o', { concurrency: 3 }, now);
    const settled = okHold(await f.ledger.admit({ orgId: 'o', holdMicroUsd: 2 * USD, route: 'cloud_a', nowMs: now }));
    await f.ledger.settle(settled, 1_234_567, now);
    const open = okHold(await f.ledger.admit({ orgId: 'o', holdMicroUsd: 4 * USD, route: 'vendor_a', nowMs: now }));
    await f.ledger.ensureOrg('r', now);
    await f.ledger.topup('r', { cash_micro_usd: 1 }, now);
    await f.ledger.startReview('r', now);
    const before = { o: await f.ledger.snapshot('o', now), r: await f.ledger.snapshot('r', now), entries: await f.ledger.entries('o', 100) };
    await f.ledger.close();
    f.db.close();
    await assert.rejects(() => f.ledger.snapshot('o', now), /closed/);

    const db = openDb(f.file);
    try {
      const ledger = openSqliteLedger(db, CONFIG);
      assert.deepEqual(await ledger.snapshot('o', now), before.o);
      assert.deepEqual(await ledger.snapshot('r', now), before.r);
      assert.deepEqual(await ledger.entries('o', 100), before.entries);
      assert.equal(before.o.reservedMicroUsd, 4 * USD);
      assert.equal(before.o.rates.find((r) => r.name === 'cloud')!.used, 1);
      await ledger.settle(open, 1 * USD, now); // a hold placed before the restart settles after it
      const s = await ledger.snapshot('o', now);
      assert.equal(s.cashMicroUsd, 20 * USD - 1_234_567 - 1 * USD);
      assert.equal(s.inFlight, 0);
    } finally {
      db.close();
    }
  } finally {
    await f.close();
  }
});

test('opening twice on the same file is idempotent; a newer schema version is refused', async () => {
  const f = fixture();
  try {
    openSqliteLedger(f.db, CONFIG);
    openSqliteLedger(f.db, CONFIG);
    assert.equal((f.db.prepare('SELECT COUNT(*) AS n FROM ledger_schema_version').get() as { n: number }).n, LEDGER_SCHEMA_VERSION);
    f.db.prepare('INSERT INTO ledger_schema_version (version) VALUES (99)').run();
    assert.throws(() => openSqliteLedger(f.db, CONFIG), /newer/);
  } finally {
    await f.close();
  }
});

// The live holds' totals that admission reads are kept by triggers; what they say must be what the
// rows say after every way a hold comes and goes.
const liveTotals = (db: SqliteFixture['db']): unknown => ({
  kept: db.prepare('SELECT org_id, day, holds, reserved_micro_usd AS reserved FROM ledger_live_holds WHERE holds <> 0 ORDER BY org_id, day').all(),
  rows: db.prepare(`SELECT org_id, day, COUNT(*) AS holds, SUM(amount_micro_usd) AS reserved FROM ledger_holds
    WHERE expired_at_ms IS NULL GROUP BY org_id, day ORDER BY org_id, day`).all(),
});

test('the live-hold totals kept by triggers follow every admission, settlement, lapse, expiry and restart', async () => {
  const f = fixture();
  try {
    const t0 = f.clock.now();
    for (const org of ['a', 'b']) {
      await f.ledger.ensureOrg(org, t0);
      await f.ledger.topup(org, { cash_micro_usd: 1000 * USD }, t0);
      await f.ledger.setOverrides(org, { concurrency: 1000, daily_spend_micro_usd: 1000 * USD }, t0);
    }
    const holds: string[] = [];
    for (let i = 0; i < 40; i++) {
      const at = t0 + i * 100;
      holds.push(okHold(await f.ledger.admit({ orgId: i % 3 ? 'a' : 'b', route: 'vendor_a', holdMicroUsd: (i + 1) * 1000, nowMs: at })));
      if (i % 4 === 3) await f.ledger.settle(holds.shift()!, 500, at);
    }
    const check = (): void => {
      const { kept, rows } = liveTotals(f.db) as { kept: unknown[]; rows: unknown[] };
      assert.deepEqual(kept, rows);
    };
    check();
    assert.equal((liveTotals(f.db) as { rows: unknown[] }).rows.length, 2);
    // The next UTC day: yesterday's holds have lapsed. The admission releases a's; b's are not
    // marked yet, so they are still in the totals, and the snapshot subtracts them.
    const tomorrow = t0 + 86_400_000;
    holds.push(okHold(await f.ledger.admit({ orgId: 'a', route: 'vendor_a', holdMicroUsd: 7_000, nowMs: tomorrow })));
    check();
    assert.equal((await f.ledger.snapshot('a', tomorrow)).inFlight, 1);
    const lapsedOfB = f.db.prepare("SELECT holds FROM ledger_live_holds WHERE org_id = 'b' AND holds > 0").pluck().get() as number;
    assert.ok(lapsedOfB > 0);
    assert.equal((await f.ledger.snapshot('b', tomorrow)).inFlight, 0);
    assert.equal((await f.ledger.expireLeases(tomorrow + 1)).length, lapsedOfB);
    check();
    // A hold settled after it lapsed, and a restarted instance releasing its predecessor's.
    await f.ledger.settle(holds[holds.length - 1]!, 100, tomorrow + 60_000);
    const restarted = (await f.reopen(CONFIG, { instanceId: 'i', processId: 'p2' })).ledger;
    const first = await f.reopen(CONFIG, { instanceId: 'i', processId: 'p1', pid: deadPid() });
    await first.ledger.releasePredecessors(tomorrow + 60_000);     // its start: registered
    okHold(await first.ledger.admit({ orgId: 'b', route: 'vendor_a', holdMicroUsd: 1_000, nowMs: tomorrow + 60_000 }));
    check();
    assert.equal((await restarted.releasePredecessors(tomorrow + 60_001)).length, 1);
    check();
    for (const id of holds) await f.ledger.settle(id, 1, tomorrow + 70_000);
    check();
    assert.deepEqual((liveTotals(f.db) as { rows: unknown[] }).rows, []);
    await f.ledger.expireLeases(tomorrow + 86_400_000);
    assert.equal((f.db.prepare('SELECT COUNT(*) AS n FROM ledger_live_holds').get() as { n: number }).n, 0, 'idle days are forgotten');
  } finally {
    await f.close();
  }
});

test('a file of schema version 2 gains the live-hold totals of the holds it already has', async () => {
  const f = fixture();
  try {
    const now = f.clock.now();
    await f.ledger.ensureOrg('o', now);
    await f.ledger.topup('o', { cash_micro_usd: 100 * USD }, now);
    await f.ledger.setOverrides('o', { concurrency: 3 }, now);
    for (let i = 0; i < 3; i++) okHold(await f.ledger.admit({ orgId: 'o', route: 'vendor_a', holdMicroUsd: USD, nowMs: now }));
    // Back to version 2, as a file written before the totals existed.
    f.db.exec(`DROP TRIGGER ledger_holds_placed; DROP TRIGGER ledger_holds_settled; DROP TRIGGER ledger_holds_expired;
      DROP TABLE ledger_live_holds; DELETE FROM ledger_schema_version WHERE version >= 3;
      DROP TABLE ledger_processes; ALTER TABLE ledger_holds DROP COLUMN charged_credit_micro_usd;
      DROP INDEX ledger_holds_live_org; CREATE INDEX ledger_holds_live_org ON ledger_holds (org_id) WHERE expired_at_ms IS NULL;
      CREATE INDEX ledger_holds_live_instance ON ledger_holds (instance_id) WHERE expired_at_ms IS NULL;
      DROP INDEX ledger_entries_idempotency; ALTER TABLE ledger_entries DROP COLUMN idempotency_key;`);
    const ledger = openSqliteLedger(f.db, CONFIG);
    assert.deepEqual((liveTotals(f.db) as { kept: unknown[] }).kept, [{ org_id: 'o', day: Math.floor(now / 86_400_000), holds: 3, reserved: 3 * USD }]);
    assert.deepEqual(await ledger.admit({ orgId: 'o', route: 'vendor_a', holdMicroUsd: USD, nowMs: now }),
      { ok: false, code: 'rate_limit_exceeded', retryAfterS: 1 });
  } finally {
    await f.close();
  }
});

test('a bad configuration is refused at open', async () => {
  const f = fixture();
  try {
    assert.throws(() => openSqliteLedger(f.db, { ...CONFIG, ramp: [] }), /ramp/);
    assert.throws(() => openSqliteLedger(f.db, { ...CONFIG, hold_lease_ms: 0 }), /hold_lease_ms/);
    assert.throws(() => openSqliteLedger(f.db, { ...CONFIG, ramp: [{ week: 0, concurrency: 1.5, daily_spend_micro_usd: 1 }] }), /integers/);
    // A renewal must land at least twice per lease: a lease that runs out before its renewal
    // frees a live request's concurrency slot and reserved money.
    const renewal = /hold_renew_ms \(\d+\) must be .*at most half of hold_lease_ms \(30000\)/;
    assert.throws(() => openSqliteLedger(f.db, { ...CONFIG, hold_renew_ms: 60_000 }), renewal);
    assert.throws(() => openSqliteLedger(f.db, { ...CONFIG, hold_renew_ms: 30_000 }), renewal);
    assert.throws(() => openSqliteLedger(f.db, { ...CONFIG, hold_renew_ms: 15_001 }), renewal);
    assert.throws(() => openSqliteLedger(f.db, { ...CONFIG, hold_renew_ms: 0 }), renewal);
    assert.doesNotThrow(() => openSqliteLedger(f.db, { ...CONFIG, hold_renew_ms: 15_000 }));
    assert.doesNotThrow(() => openSqliteLedger(f.db, CONFIG), 'no hold_renew_ms: the default, lease / 3');
  } finally {
    await f.close();
  }
});
