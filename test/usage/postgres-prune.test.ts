// The PostgreSQL usage store's retention prune on a backlog: PRUNE_ROWS records per statement, so
// no one DELETE runs into the server's statement_timeout (12 s) however large the backlog; two
// processes pruning at once share the work; close() during a running prune stops it between
// batches, before the store ends the pool. Gated like the other shared-store suites
// (test/helpers/postgres.ts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { PRUNE_ROWS, openPostgresUsageStore } from '../../lib/usage/postgres.ts';
import { createTestDatabase, postgresReachable, testPool, type TestDatabase } from '../helpers/postgres.ts';

const skip = (await postgresReachable()) ? false : 'PostgreSQL not reachable';

const T0 = Date.UTC(2026, 10, 20, 12);
const EXPIRED = 2 * PRUNE_ROWS + 345;   // three batches
const KEPT = 40;

let db: TestDatabase;
before(async () => { if (!skip) db = await createTestDatabase('usage_prune', { migrated: true }); });
after(async () => { await db?.drop(); });

/** A pool on a freshly seeded table; `deletes` lists the rows each DELETE statement removed, and
 *  `afterDelete` runs when one has answered, before the prune sees the answer. */
async function seeded(afterDelete?: (statements: number) => void) {
  const pool = testPool(db.url);
  await pool.query('TRUNCATE usage_records');
  const insert = (from: number, to: number, atMs: string): Promise<unknown> => pool.query(`
    INSERT INTO usage_records (id, org_id, key_id, at_ms, started_at_ms, format, retries, fallbacks, status,
      input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens, usage_estimated,
      cost_micro_usd, standard_cost_micro_usd, duration_ms, client_closed)
    SELECT 'req-' || i, 'org_' || (i % 3), 'key_1', ${atMs}, ${atMs}, 'responses', 0, 0, 200, 10, 0, 0, 5, 0, false,
      100, 100, 50, false FROM generate_series($1::int, $2::int) i`, [from, to]);
  await insert(0, EXPIRED - 1, `${T0 - 3_600_000} + i`);
  await insert(EXPIRED, EXPIRED + KEPT - 1, `${T0} + i`);
  const deletes: number[] = [];
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<pg.QueryResult>;
  (pool as unknown as { query: unknown }).query = async (...args: unknown[]) => {
    const result = await query(...args);
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
    if (/^\s*DELETE/i.test(text)) { deletes.push(result.rowCount ?? 0); afterDelete?.(deletes.length); }
    return result;
  };
  const count = async (): Promise<number> => Number((await query('SELECT COUNT(*) AS n FROM usage_records')).rows[0].n);
  return { pool, deletes, count };
}

test('the prune deletes a backlog PRUNE_ROWS records per statement', { skip }, async () => {
  const s = await seeded();
  try {
    const store = openPostgresUsageStore(s.pool);
    assert.equal(await store.prune(T0), EXPIRED);
    assert.equal(await s.count(), KEPT);
    assert.ok(s.deletes.length >= Math.ceil(EXPIRED / PRUNE_ROWS), `${s.deletes.length} statements`);
    assert.ok(s.deletes.every((n) => n <= PRUNE_ROWS), `rows per statement: ${s.deletes.join(', ')}`);
    assert.equal(await store.prune(T0), 0);
  } finally { await s.pool.end(); }
});

test('two processes pruning at once delete every expired record between them, once', { skip }, async () => {
  const s = await seeded();
  const other = testPool(db.url);
  try {
    const [a, b] = await Promise.all([openPostgresUsageStore(s.pool).prune(T0), openPostgresUsageStore(other).prune(T0)]);
    assert.equal(a + b, EXPIRED);
    assert.equal(await s.count(), KEPT);
  } finally { await Promise.all([s.pool.end(), other.end()]); }
});

test('close() during a running prune stops it between batches, before the pool is ended', { skip }, async () => {
  let closed: Promise<void> | undefined;
  let store: ReturnType<typeof openPostgresUsageStore> | undefined;
  const s = await seeded((statements) => { if (statements === 1) closed = store!.close(); });
  try {
    store = openPostgresUsageStore(s.pool);
    const deleted = await store.prune(T0);   // resolves: no query on an ended pool
    await closed;
    assert.equal(deleted, PRUNE_ROWS, 'the prune stopped after its first batch');
    assert.equal(await s.count(), EXPIRED + KEPT - PRUNE_ROWS);
  } finally { await s.pool.end(); }
});
