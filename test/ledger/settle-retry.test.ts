// A settlement the database did not take is queued and written again until it is (settle-retry.ts):
// on SQLite, another connection holding the file's write lock past the busy timeout; on
// PostgreSQL, a database that does not answer. Close tries once more and reports what it could not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { openSqliteLedger } from '../../lib/ledger/sqlite.ts';
import { openPostgresLedger } from '../../lib/ledger/postgres.ts';
import type { SettleReports, Settlement } from '../../lib/ledger/settle-retry.ts';
import { waitFor } from '../helpers/wait.ts';
import { CONFIG, USD, fixture, okHold, openDb, type SqliteFixture } from './helpers.ts';

/** A funded org with one 1 USD hold, on a ledger whose writes give up after 20 ms of a held lock. */
async function heldOrg(f: SqliteFixture, reports: SettleReports) {
  const ledger = openSqliteLedger(f.db, CONFIG, undefined, reports);
  const now = f.clock.now();
  await ledger.ensureOrg('o', now);
  await ledger.topup('o', { cash_micro_usd: 10 * USD }, now);
  const hold = okHold(await ledger.admit({ orgId: 'o', holdMicroUsd: USD, route: 'vendor_a', nowMs: now }));
  f.db.pragma('busy_timeout = 20');
  return { ledger, now, hold };
}

/** Another process holding the SQLite file's write lock until it is released. */
function writeLock(f: SqliteFixture): () => void {
  const other = openDb(f.file);
  other.exec('BEGIN IMMEDIATE');
  return () => { other.exec('COMMIT'); other.close(); };
}

test('SQLite: a settlement refused by a held write lock is retried and charges the real cost once the lock is released', async () => {
  const f = fixture();
  try {
    const deferred: string[] = [];
    const rounds: number[] = [];
    const { ledger, now, hold } = await heldOrg(f, {
      onSettleDeferred: (holdId) => deferred.push(holdId),
      settleRetryDelayMs: (failures) => { rounds.push(failures); return 5; },
    });
    const release = writeLock(f);
    await ledger.settle(hold, 700_000, now);                   // taken: queued, not rejected
    assert.deepEqual(deferred, [hold]);
    let s = await ledger.snapshot('o', now);                   // a WAL reader does not wait for the lock
    assert.deepEqual([s.inFlight, s.cashMicroUsd], [1, 10 * USD]);
    await waitFor(() => rounds.length >= 2, 'a retry to fail under the lock');
    assert.deepEqual(rounds.slice(0, 2), [0, 1], 'backoff counts the failed rounds');

    release();
    await waitFor(async () => (await ledger.snapshot('o', now)).inFlight === 0, 'the retried settlement');
    s = await ledger.snapshot('o', now);
    assert.deepEqual([s.cashMicroUsd, s.dailyUsedMicroUsd, s.reservedMicroUsd], [10 * USD - 700_000, 700_000, 0]);
    const settles = (await ledger.entries('o', 10)).filter((e) => e.kind === 'settle');
    assert.deepEqual(settles.map((e) => [e.hold_id, e.amount_micro_usd]), [[hold, 700_000]]);
    await ledger.close();
  } finally {
    await f.close();
  }
});

test('SQLite: close writes the queued settlements once more', async () => {
  const f = fixture();
  try {
    const lost: Settlement[][] = [];
    const { ledger, now, hold } = await heldOrg(f, { settleRetryDelayMs: () => 60_000, onSettleLost: (l) => lost.push(l) });
    const release = writeLock(f);
    await ledger.settle(hold, 700_000, now);
    release();
    await ledger.close();
    assert.deepEqual(lost, []);
    const s = await (await f.reopen()).ledger.snapshot('o', now);
    assert.deepEqual([s.inFlight, s.cashMicroUsd], [0, 10 * USD - 700_000]);
  } finally {
    await f.close();
  }
});

test('SQLite: close reports the settlements it still could not write; their holds stay for the lease to release', async () => {
  const f = fixture();
  try {
    const lost: Array<{ settlements: Settlement[]; err: unknown }> = [];
    const { ledger, now, hold } = await heldOrg(f, {
      settleRetryDelayMs: () => 60_000, onSettleLost: (settlements, err) => lost.push({ settlements, err }),
    });
    const release = writeLock(f);
    await ledger.settle(hold, 700_000, now);
    await ledger.close();
    release();
    assert.deepEqual(lost.map((l) => l.settlements), [[{ holdId: hold, cost: 700_000, nowMs: now }]]);
    assert.match(String(lost[0]!.err), /locked|busy/i);
    assert.equal((await (await f.reopen()).ledger.snapshot('o', now)).inFlight, 1);
  } finally {
    await f.close();
  }
});

test('PostgreSQL: close reports the settlements it could not write, by hold id', async () => {
  const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 1_000 });
  pool.on('error', () => {});
  const deferred: string[] = [];
  const lost: Settlement[][] = [];
  const ledger = openPostgresLedger(pool, CONFIG, {
    processId: 'p', settleRetryDelayMs: () => 60_000, onSettleDeferred: (h) => deferred.push(h), onSettleLost: (l) => lost.push(l),
  });
  try {
    await ledger.settle('h1', 500, 1_000);
    await ledger.settle('h2', 700, 2_000);
    assert.deepEqual(deferred, ['h1', 'h2']);
    await ledger.close();
    assert.deepEqual(lost, [[{ holdId: 'h1', cost: 500, nowMs: 1_000 }, { holdId: 'h2', cost: 700, nowMs: 2_000 }]]);
  } finally {
    await pool.end();
  }
});

/** A PostgreSQL pool that is down until `up` is set: every statement is refused at once, as by a
 *  database that resets connections; up, admissions are admitted and settlements taken. */
function fakePostgres() {
  const db = { up: false, settleAttempts: 0, settled: [] as string[][] };
  const pool = {
    async query(q: { name?: string; values: unknown[] }) {
      if (q.name === 'ledger_settle' || q.name === 'ledger_settle_many') {
        db.settleAttempts++;
        if (!db.up) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        db.settled.push(q.name === 'ledger_settle' ? [q.values[0] as string] : q.values[0] as string[]);
        return { rows: [] };
      }
      if (!db.up) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      return { rows: [{ code: 'ok', spend_remaining: 0, retry_after_s: null, exempt: false }] };
    },
  };
  return { db, pool: pool as unknown as pg.Pool };
}

/** Lets the adapter's round (group commit turns, promise chains) run out. */
const turns = async (n = 10): Promise<void> => { for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r)); };

test('PostgreSQL: however long the database is away, a queued settlement is tried again every second', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { db, pool } = fakePostgres();
  const ledger = openPostgresLedger(pool, CONFIG, { processId: 'p' });
  await ledger.settle('h1', 500, 1_000);
  assert.equal(db.settleAttempts, 1);
  for (let second = 1; second <= 40; second++) {                // a 40 s outage
    t.mock.timers.tick(1_000);
    await turns();
    assert.equal(db.settleAttempts, 1 + second, `a retry in second ${second} of the outage`);
  }
  db.up = true;
  t.mock.timers.tick(1_000);
  await turns();
  assert.deepEqual(db.settled, [['h1']], 'written within a second of the database answering');
  await ledger.close();
});

test('PostgreSQL: a queued settlement is written as soon as the database takes an admission, not at the next round', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { db, pool } = fakePostgres();
  const ledger = openPostgresLedger(pool, CONFIG, { processId: 'p', settleRetryDelayMs: () => 60_000 });
  await ledger.settle('h1', 500, 1_000);
  await ledger.settle('h2', 700, 1_000);
  db.up = true;
  assert.equal((await ledger.admit({ orgId: 'o', holdMicroUsd: 1_000, route: 'vendor_a', nowMs: 2_000 })).ok, true);
  await turns();
  assert.deepEqual(db.settled.flat().sort(), ['h1', 'h2'], 'no timer moved: the admission brought the round forward');
  await ledger.close();
});
