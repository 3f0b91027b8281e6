// Flex race slots shared through PostgreSQL (lib/store/postgres-flex-slots.ts) across a database
// outage: a slot whose release the database did not take, or whose acquisition's answer was lost,
// is renewed no more (it lapses with its lease) and is deleted as soon as the database answers
// again. Gated like the other shared-store suites (test/helpers/postgres.ts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { ManualClock } from '../../lib/clock.ts';
import { FLEX_SLOT_TIMING, SharedFlexSlots } from '../../lib/store/postgres-flex-slots.ts';
import { createTestDatabase, postgresReachable, testPool, type TestDatabase } from '../helpers/postgres.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { waitFor } from '../helpers/wait.ts';

const skip = (await postgresReachable()) ? false : 'PostgreSQL not reachable';
const LEASE_MS = FLEX_SLOT_TIMING.leaseMs;

let db: TestDatabase;
let proxy: TcpProxy;
let direct: pg.Pool;
before(async () => {
  if (skip) return;
  db = await createTestDatabase('flex_slots', { migrated: true });
  proxy = await startTcpProxy('127.0.0.1', Number(new URL(db.url).port || 5432));
  direct = testPool(db.url);
});
after(async () => { await direct?.end(); await proxy?.close(); await db?.drop(); });

/** A pool reaching the database through the proxy; `fail` may refuse a statement, or lose its
 *  answer after the server ran it. */
function proxiedPool(fail: (text: string) => 'refuse' | 'lose answer' | undefined = () => undefined): pg.Pool {
  const url = new URL(db.url);
  url.host = `127.0.0.1:${proxy.port}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  pool.on('error', () => {});
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<pg.QueryResult>;
  (pool as unknown as { query: unknown }).query = async (...args: unknown[]) => {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
    const how = fail(text);
    if (how === 'refuse') throw new Error('refused');
    const result = await query(...args);
    if (how === 'lose answer') throw new Error('Connection terminated unexpectedly');
    return result;
  };
  return pool;
}

const rowsOf = async (org: string): Promise<number> =>
  (await direct.query('SELECT count(*)::INT AS n FROM flex_race_slots WHERE org_id = $1', [org])).rows[0].n;

test('a slot whose release the database did not take is renewed no more: it lapses with its lease', { skip }, async () => {
  const clock = new ManualClock(Date.now());
  const pool = proxiedPool((text) => (/DELETE FROM flex_race_slots/.test(text) ? 'refuse' : undefined));
  const slots = new SharedFlexSlots(pool, 2, 'renew-proc', clock, () => {});
  try {
    assert.deepEqual([await slots.tryAcquire('renew-org'), await slots.tryAcquire('renew-org')], [true, true]);
    await slots.release('renew-org');                            // the DELETE fails, for good
    assert.equal(await rowsOf('renew-org'), 2);
    clock.advance(LEASE_MS / 2);
    await slots.renew();                                         // the slot still held, only
    clock.advance(LEASE_MS / 2 + 1);
    assert.equal(await slots.tryAcquire('renew-org'), true, 'the slot given back lapsed with its lease');
    assert.equal(await slots.tryAcquire('renew-org'), false, 'the slot still held was renewed');
  } finally {
    slots.stop();
    await pool.end();
  }
});

test('slots whose release failed while the database was unreachable are deleted once it answers again', { skip }, async () => {
  const clock = new ManualClock(Date.now());
  const pool = proxiedPool();
  const slots = new SharedFlexSlots(pool, 3, 'outage-proc', clock, () => {}, { ...FLEX_SLOT_TIMING, releaseRetryMs: 20 });
  try {
    for (let i = 0; i < 3; i++) assert.equal(await slots.tryAcquire('outage-org'), true);
    assert.equal(await slots.tryAcquire('outage-org'), false);
    proxy.cut();
    try {
      for (let i = 0; i < 3; i++) await slots.release('outage-org');
      assert.equal(await slots.tryAcquire('outage-org'), true, 'counted in this process meanwhile');
      await slots.release('outage-org');
    } finally {
      proxy.restore();
    }
    assert.equal(await rowsOf('outage-org'), 3, 'the releases did not reach the database');
    await waitFor(async () => (await rowsOf('outage-org')) === 0, 'the slots deleted once the database answers', 5_000);
    for (let i = 0; i < 3; i++) assert.equal(await slots.tryAcquire('outage-org'), true, 'the organization races flex again');
  } finally {
    slots.stop();
    await pool.end();
  }
});

test('a slot the database took but whose answer was lost is deleted, not kept', { skip }, async () => {
  const clock = new ManualClock(Date.now());
  let lose = true;
  const pool = proxiedPool((text) => (lose && /SELECT flex_slot_/.test(text) ? 'lose answer' : undefined));
  const slots = new SharedFlexSlots(pool, 1, 'lost-proc', clock, () => {}, { ...FLEX_SLOT_TIMING, releaseRetryMs: 20 });
  try {
    assert.equal(await slots.tryAcquire('lost-org'), true, 'counted in this process');
    lose = false;
    await slots.release('lost-org');
    await waitFor(async () => (await rowsOf('lost-org')) === 0, 'the row written without an answer deleted', 5_000);
    assert.equal(await slots.tryAcquire('lost-org'), true);
  } finally {
    slots.stop();
    await pool.end();
  }
});
