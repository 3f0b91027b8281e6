// What only the shared adapter has: migrations raced by processes starting at once, admissions
// raced by separate connection pools (processes) on one organization, flex race slots counted
// across processes, one sweeper at a time, a renewal racing a release, a statement the client gave
// up on. Real PostgreSQL; skipped (with a note) without it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { ManualClock } from '../../lib/clock.ts';
import { clientConfig, migrate } from '../../lib/store/postgres.ts';
import { MIGRATIONS } from '../../lib/store/postgres-schema.ts';
import { openPostgresLedger } from '../../lib/ledger/postgres.ts';
import { SharedFlexSlots } from '../../lib/store/postgres-flex-slots.ts';
import { createTestDatabase, postgresReachable, testPool, type TestDatabase } from '../helpers/postgres.ts';
import { waitFor } from '../helpers/wait.ts';
import { CONFIG, USD } from './helpers.ts';

const available = await postgresReachable();
const skip = available ? false : 'PostgreSQL not reachable';
let db: TestDatabase;
const pools: pg.Pool[] = [];
const newPool = (max = 4): pg.Pool => { const p = testPool(db.url, max); pools.push(p); return p; };

before(async () => { if (available) db = await createTestDatabase('ledger'); });
after(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db?.drop();
});

test('migrations raced by five processes starting at once apply once; a newer schema is refused', { skip }, async () => {
  const five = Array.from({ length: 5 }, () => newPool(1));
  const versions = await Promise.all(five.map((p) => migrate(p)));
  assert.deepEqual(versions, versions.map(() => MIGRATIONS.at(-1)!.version));
  const applied = await five[0]!.query('SELECT version FROM gateway_schema_migrations ORDER BY version');
  assert.deepEqual(applied.rows.map((r) => r.version), MIGRATIONS.map((m) => m.version));
  await five[0]!.query('INSERT INTO gateway_schema_migrations (version, name) VALUES (999, $1)', ['from the future']);
  await assert.rejects(migrate(five[1]!), /newer than this build/);
  await five[0]!.query('DELETE FROM gateway_schema_migrations WHERE version = 999');
});

test('four processes racing admissions and settlements on one org: the ceiling holds and money is conserved exactly', { skip }, async () => {
  const clock = new ManualClock();
  const now = clock.now();
  const ledgers = Array.from({ length: 4 }, (_, i) => openPostgresLedger(newPool(4), CONFIG, { processId: `p${i}` }));
  await ledgers[0]!.ensureOrg('race', now);
  await ledgers[0]!.topup('race', { cash_micro_usd: 1000 * USD }, now);
  await ledgers[0]!.setOverrides('race', { concurrency: 1000 }, now);       // the daily ceiling (10 USD) binds
  const HOLD = 300_000;
  const admitted: string[] = [];
  await Promise.all(ledgers.map(async (l) => {
    await Promise.all(Array.from({ length: 30 }, async () => {
      const r = await l.admit({ orgId: 'race', holdMicroUsd: HOLD, route: 'vendor_a', nowMs: now });
      if (r.ok) admitted.push(r.holdId); else assert.equal(r.code, 'spend_velocity_exceeded');
    }));
  }));
  // Admitted while used < 10 USD: 0, 0.3, …, 9.9 → exactly 34 holds, however the 120 interleave.
  assert.equal(admitted.length, 34);
  await Promise.all(admitted.map((h, i) => ledgers[i % 4]!.settle(h, 250_000, now)));
  await Promise.all(admitted.map((h, i) => ledgers[(i + 1) % 4]!.settle(h, 250_000, now)));  // replays: no-ops
  const s = await ledgers[3]!.snapshot('race', now);
  assert.equal(s.inFlight, 0);
  assert.equal(s.reservedMicroUsd, 0);
  assert.equal(s.cashMicroUsd, 1000 * USD - 34 * 250_000);
  assert.equal(s.dailyUsedMicroUsd, 34 * 250_000);
});

test('concurrency across processes: never more live holds than the limit', { skip }, async () => {
  const now = new ManualClock().now();
  const ledgers = Array.from({ length: 3 }, (_, i) => openPostgresLedger(newPool(4), CONFIG, { processId: `c${i}` }));
  await ledgers[0]!.ensureOrg('conc', now);
  await ledgers[0]!.topup('conc', { cash_micro_usd: 1000 * USD }, now);
  await ledgers[0]!.setOverrides('conc', { concurrency: 7, daily_spend_micro_usd: 1000 * USD }, now);
  const results = await Promise.all(Array.from({ length: 90 }, (_, i) => ledgers[i % 3]!.admit({ orgId: 'conc', holdMicroUsd: 10, route: 'vendor_a', nowMs: now })));
  assert.equal(results.filter((r) => r.ok).length, 7);
  assert.ok(results.filter((r) => !r.ok).every((r) => !r.ok && r.code === 'rate_limit_exceeded' && r.retryAfterS === 1));
  assert.equal((await ledgers[1]!.snapshot('conc', now)).inFlight, 7);
});

test('flex race slots count across processes; a dead process\'s slots lapse with their lease', { skip }, async () => {
  const clock = new ManualClock();
  const pool = newPool(4);
  const noError = (err: unknown) => { throw err; };
  const a = new SharedFlexSlots(pool, 3, 'proc-a', clock, noError);
  const b = new SharedFlexSlots(pool, 3, 'proc-b', clock, noError);
  try {
    const got = await Promise.all([a, b, a, b, a, b].map((s) => s.tryAcquire('flex-org')));
    assert.equal(got.filter(Boolean).length, 3, 'three slots for the organization, wherever they are taken');
    assert.equal(await a.tryAcquire('other-org'), true, 'another organization has its own');
    const heldByA = got.filter((ok, i) => ok && i % 2 === 0).length;
    for (let i = 0; i < heldByA; i++) await a.release('flex-org');
    assert.equal(await b.tryAcquire('flex-org'), heldByA > 0);
    // b "dies": its slots stop being renewed and lapse with their lease (FLEX_SLOT_TIMING.leaseMs).
    clock.advance(61_000);
    assert.equal(await a.tryAcquire('flex-org'), true);
  } finally {
    a.stop(); b.stop();
  }
});

test('one sweeper at a time: two processes sweeping at once release each lapsed hold once', { skip }, async () => {
  const clock = new ManualClock();
  const now = clock.now();
  const [l1, l2] = [openPostgresLedger(newPool(2), CONFIG, { processId: 's1' }), openPostgresLedger(newPool(2), CONFIG, { processId: 's2' })];
  await l1!.ensureOrg('sweep', now);
  await l1!.topup('sweep', { cash_micro_usd: 10 * USD }, now);
  for (let i = 0; i < 3; i++) assert.ok((await l1!.admit({ orgId: 'sweep', holdMicroUsd: 1_000, route: 'vendor_a', nowMs: now })).ok);
  const later = now + CONFIG.hold_lease_ms;
  const [r1, r2] = await Promise.all([l1!.expireLeases(later), l2!.expireLeases(later)]);
  assert.equal([...r1, ...r2].filter((h) => h.orgId === 'sweep').length, 3);
  const entries = await l1!.entries('sweep', 50);
  assert.equal(entries.filter((e) => e.kind === 'lease_expired').length, 3);
  assert.equal((await l2!.snapshot('sweep', later)).inFlight, 0);
});

// Group commit: the calls one process makes while its previous batch is in flight go in one
// statement and one transaction. Rows one transaction wrote share its id (xmin).
const transactionsOf = async (pool: pg.Pool, sql: string, values: unknown[]): Promise<number> =>
  (await pool.query(`SELECT count(DISTINCT xmin::TEXT)::INT AS n FROM (${sql}) AS rows`, values)).rows[0].n;

test('one turn of admissions and of settlements: one transaction each, every admission seeing the ones before it', { skip }, async () => {
  const now = new ManualClock().now();
  const pool = newPool(4);
  const ledger = openPostgresLedger(pool, CONFIG, { processId: 'g1' });
  await ledger.ensureOrg('group', now);
  await ledger.topup('group', { cash_micro_usd: 1000 * USD }, now);
  await ledger.setOverrides('group', { concurrency: 12, daily_spend_micro_usd: 1000 * USD }, now);
  const results = await Promise.all(Array.from({ length: 20 }, () => ledger.admit({ orgId: 'group', holdMicroUsd: 1_000, route: 'vendor_a', nowMs: now })));
  const held = results.flatMap((r) => (r.ok ? [r.holdId] : []));
  assert.equal(held.length, 12, 'exactly the concurrency, though all twenty went together');
  assert.ok(results.slice(12).every((r) => !r.ok && r.code === 'rate_limit_exceeded'), 'in arrival order: the first twelve admitted');
  assert.equal(await transactionsOf(pool, 'SELECT xmin FROM ledger_holds WHERE org_id = $1', ['group']), 1);
  await Promise.all(held.map((h) => ledger.settle(h, 700, now)));
  assert.equal(await transactionsOf(pool, "SELECT xmin FROM ledger_entries WHERE org_id = $1 AND kind = 'settle'", ['group']), 1);
  const s = await ledger.snapshot('group', now);
  assert.equal(s.inFlight, 0);
  assert.equal(s.cashMicroUsd, 1000 * USD - 12 * 700);
});

test('a batch with an unknown organization: that admission fails alone, the rest of its batch is admitted', { skip }, async () => {
  const now = new ManualClock().now();
  const ledger = openPostgresLedger(newPool(4), CONFIG, { processId: 'g2' });
  await ledger.ensureOrg('known', now);
  await ledger.topup('known', { cash_micro_usd: 10 * USD }, now);
  const results = await Promise.allSettled(['known', 'nobody', 'known'].map((orgId) =>
    ledger.admit({ orgId, holdMicroUsd: 1_000, route: 'vendor_a', nowMs: now })));
  assert.equal(results[0]!.status === 'fulfilled' && results[0]!.value.ok, true);
  assert.equal(results[2]!.status === 'fulfilled' && results[2]!.value.ok, true);
  assert.equal(results[1]!.status, 'rejected');
  assert.match(String((results[1] as PromiseRejectedResult).reason), /unknown organization "nobody"/);
  assert.equal((await ledger.snapshot('known', now)).inFlight, 2);
});

test('batches of four processes over two organizations and both shared pools: all decided, limits and money exact', { skip }, async () => {
  const now = new ManualClock().now();
  const config = { ...CONFIG, pools: CONFIG.pools.map((p) => ({ ...p, per_minute: 1_000 })) };
  const ledgers = Array.from({ length: 4 }, (_, i) => openPostgresLedger(newPool(4), config, { processId: `m${i}` }));
  for (const org of ['m-a', 'm-b']) {
    await ledgers[0]!.ensureOrg(org, now);
    await ledgers[0]!.topup(org, { cash_micro_usd: 1000 * USD }, now);
    await ledgers[0]!.setOverrides(org, { concurrency: 9, daily_spend_micro_usd: 1000 * USD }, now);
  }
  // Each process mixes both organizations and routes of both pools in every batch, in a different order.
  const calls = Array.from({ length: 160 }, (_, i) => {
    const [k, j] = [i % 4, i >> 2];
    return { ledger: ledgers[k]!, orgId: (j + k) % 2 ? 'm-a' : 'm-b', route: ((j >> 1) + k) % 2 ? 'cloud_a' as const : 'vendor_a' as const };
  });
  const results = await Promise.all(calls.map((c) => c.ledger.admit({ orgId: c.orgId, holdMicroUsd: 1_000, route: c.route, nowMs: now })));
  for (const org of ['m-a', 'm-b']) {
    const admitted = results.filter((r, i) => r.ok && calls[i]!.orgId === org);
    assert.equal(admitted.length, 9, `${org}: exactly its concurrency`);
  }
  await Promise.all(results.map((r, i) => (r.ok ? calls[(i + 1) % calls.length]!.ledger.settle(r.holdId, 500, now) : undefined)));
  for (const org of ['m-a', 'm-b']) {
    const s = await ledgers[3]!.snapshot(org, now);
    assert.equal(s.inFlight, 0);
    assert.equal(s.cashMicroUsd, 1000 * USD - 9 * 500);
  }
});

test('a database migrated before version 4 gains the rule that every live hold counts against today', { skip }, async () => {
  const pool = newPool(1);
  await migrate(pool);
  // As an earlier build left it: ledger_admit counted a hold against the day it was placed.
  const { rows: [fn] } = await pool.query("SELECT pg_get_functiondef('ledger_admit'::regproc) AS sql");
  const held = 'COALESCE(sum(amount_micro_usd), 0)::BIGINT INTO v_in_flight, v_held';
  assert.ok(fn.sql.includes(held));
  await pool.query(fn.sql.replace(held, 'COALESCE(sum(amount_micro_usd) FILTER (WHERE day = v_day), 0)::BIGINT INTO v_in_flight, v_held'));
  await pool.query('DELETE FROM gateway_schema_migrations WHERE version >= 4');

  const ledger = openPostgresLedger(pool, CONFIG, { processId: 'v4' });
  const midnight = (Math.floor(new ManualClock().now() / 86_400_000) + 1) * 86_400_000;
  await ledger.ensureOrg('v4', midnight - 5_000);
  await ledger.topup('v4', { cash_micro_usd: 100 * USD }, midnight - 5_000);   // ceiling 10 USD
  const admitAt = (nowMs: number) => ledger.admit({ orgId: 'v4', holdMicroUsd: 6 * USD, route: 'vendor_a', nowMs });
  assert.ok((await admitAt(midnight - 5_000)).ok);
  assert.ok((await admitAt(midnight + 5_000)).ok);
  assert.ok((await admitAt(midnight + 5_000)).ok, 'the old rule: yesterday\'s live hold counts on no day');

  assert.equal(await migrate(pool), MIGRATIONS.at(-1)!.version);
  assert.deepEqual(await admitAt(midnight + 6_000), { ok: false, code: 'spend_velocity_exceeded' });
  assert.equal((await ledger.snapshot('v4', midnight + 6_000)).dailyUsedMicroUsd, 18 * USD);
});

test('a settlement the database did not take is retried until it is, and charges its cost once', { skip }, async () => {
  const pool = newPool(2);
  await migrate(pool);
  const now = new ManualClock().now();
  const setup = openPostgresLedger(pool, CONFIG, { processId: 'r0' });
  await setup.ensureOrg('retry', now);
  await setup.topup('retry', { cash_micro_usd: 10 * USD }, now);
  const admitted = await setup.admit({ orgId: 'retry', holdMicroUsd: USD, route: 'vendor_a', nowMs: now });
  assert.ok(admitted.ok);
  // The first statement fails as an unreachable database would; the rest go through.
  let failures = 1;
  const flaky = {
    query: (...args: Parameters<pg.Pool['query']>) => (failures-- > 0 ? Promise.reject(new Error('connect ECONNREFUSED')) : pool.query(...args)),
  } as unknown as pg.Pool;
  const deferred: string[] = [];
  const ledger = openPostgresLedger(flaky, CONFIG, { processId: 'r1', settleRetryDelayMs: () => 5, onSettleDeferred: (h) => deferred.push(h) });
  await ledger.settle(admitted.holdId, 700_000, now);
  assert.deepEqual(deferred, [admitted.holdId]);
  await waitFor(async () => (await setup.snapshot('retry', now)).inFlight === 0, 'the retried settlement');
  await ledger.close();
  const s = await setup.snapshot('retry', now);
  assert.deepEqual([s.cashMicroUsd, s.dailyUsedMicroUsd], [10 * USD - 700_000, 700_000]);
});

/** Statements of this database waiting for a lock now. */
const lockWaits = async (pool: pg.Pool): Promise<number> => (await pool.query(
  "SELECT count(*)::INT AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n;

test('a renewal that commits while a sweep and an admission wait for the org lock keeps its hold: the release re-checks the lease', { skip }, async () => {
  const t0 = new ManualClock().now();
  await migrate(newPool(1));
  const owner = openPostgresLedger(newPool(2), CONFIG, { processId: 'owner', instanceId: 'host-a:8080' });
  const sweeper = openPostgresLedger(newPool(2), CONFIG, { processId: 'sweeper', instanceId: 'host-s:8080' });
  const other = openPostgresLedger(newPool(2), CONFIG, { processId: 'other', instanceId: 'host-b:8080' });
  await owner.ensureOrg('renewed', t0);
  await owner.topup('renewed', { cash_micro_usd: 100 * USD }, t0);
  await owner.setOverrides('renewed', { concurrency: 1 }, t0);
  const h = await owner.admit({ orgId: 'renewed', holdMicroUsd: 2 * USD, route: 'vendor_a', nowMs: t0 });   // lease until t0 + 30 000
  assert.ok(h.ok);
  // Another transaction holds the organization's row (a busy organization's batch).
  const probe = newPool(1);
  const locker = await newPool(1).connect();
  await locker.query('BEGIN');
  await locker.query("SELECT 1 FROM ledger_orgs WHERE org_id = 'renewed' FOR UPDATE");
  // Both pick the hold as lapsed, then wait for the organization's row.
  const sweep = sweeper.expireLeases(t0 + 30_000);
  const admission = other.admit({ orgId: 'renewed', holdMicroUsd: 2 * USD, route: 'vendor_a', nowMs: t0 + 30_001 });
  await waitFor(async () => (await lockWaits(probe)) === 2, 'the sweep and the admission waiting for the organization');
  // Meanwhile the owner, alive and streaming, renews it (a renewal takes no organization lock).
  await owner.renew([{ holdId: h.holdId, deliveredMicroUsd: 900_000 }], t0 + 29_999);
  await locker.query('COMMIT');
  locker.release();
  assert.deepEqual((await sweep).filter((r) => r.orgId === 'renewed'), [], 'the renewed hold is not released');
  assert.deepEqual(await admission, { ok: false, code: 'rate_limit_exceeded', retryAfterS: 1 }, 'it still holds the concurrency');
  await owner.settle(h.holdId, 400_000, t0 + 35_000);
  const s = await owner.snapshot('renewed', t0 + 35_000);
  assert.deepEqual([s.cashMicroUsd, s.dailyUsedMicroUsd, s.inFlight], [100 * USD - 400_000, 400_000, 0], 'charged its real cost');
  assert.deepEqual((await owner.entries('renewed', 10)).filter((e) => e.hold_id).map((e) => e.kind), ['settle']);
});

test('an admission the client gave up on is rolled back on the server (statement_timeout under query_timeout): no hold is left behind', { skip }, async () => {
  const now = new ManualClock().now();
  const pool = new pg.Pool({ ...clientConfig(db.url, 1_000), max: 2 });   // the gateway's settings, the timeouts shortened
  pool.on('error', () => {});
  pools.push(pool);
  await migrate(pool);
  const ledger = openPostgresLedger(pool, CONFIG, { processId: 'timed-out' });
  await ledger.ensureOrg('slow', now);
  await ledger.topup('slow', { cash_micro_usd: 100 * USD }, now);
  const locker = await newPool(1).connect();
  await locker.query('BEGIN');
  await locker.query("SELECT 1 FROM ledger_orgs WHERE org_id = 'slow' FOR UPDATE");
  await assert.rejects(ledger.admit({ orgId: 'slow', holdMicroUsd: 2 * USD, route: 'vendor_a', nowMs: now }));   // answered 503
  await locker.query('COMMIT');
  locker.release();
  const probe = newPool(1);
  await waitFor(async () => (await probe.query(
    "SELECT count(*)::INT AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%ledger_admit(%' AND state = 'active' AND pid <> pg_backend_pid()")).rows[0].n === 0,
  'nothing left running on the server');
  const s = await ledger.snapshot('slow', now);
  assert.deepEqual([s.inFlight, s.reservedMicroUsd], [0, 0], 'no hold committed behind the caller\'s back');
  assert.ok((await ledger.admit({ orgId: 'slow', holdMicroUsd: 2 * USD, route: 'vendor_a', nowMs: now })).ok);
});
