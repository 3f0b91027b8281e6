// The state owners table in PostgreSQL (lib/store/postgres-state-owners.ts): the prune deletes
// PRUNE_ROWS rows per statement, so no one DELETE runs into the server's statement_timeout, and
// stops between batches once the pool is ending (the store's close). Gated like the other
// shared-store suites (test/helpers/postgres.ts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { PRUNE_ROWS, postgresStateOwnerRows } from '../../lib/store/postgres-state-owners.ts';
import { createTestDatabase, postgresReachable, testPool, type TestDatabase } from '../helpers/postgres.ts';

const skip = (await postgresReachable()) ? false : 'PostgreSQL not reachable';

const T0 = Date.UTC(2026, 10, 20, 12);
const EXPIRED = 2 * PRUNE_ROWS + 55;   // three batches
const KEPT = 10;

let db: TestDatabase;
before(async () => { if (!skip) db = await createTestDatabase('state_prune', { migrated: true }); });
after(async () => { await db?.drop(); });

/** A pool on a freshly seeded table; `deletes` lists the rows each DELETE statement removed, and
 *  `afterDelete` runs when one has answered, before the prune sees the answer. */
async function seeded(afterDelete?: (pool: pg.Pool, statements: number) => void) {
  const pool = testPool(db.url);
  await pool.query('TRUNCATE provider_state_owners');
  await pool.query(`INSERT INTO provider_state_owners (id, org_id, route, issued_at_ms)
    SELECT 'resp_old_' || i, 'org_a', 'vendor_a', ${T0 - 3_600_000} + i FROM generate_series(1, $1::int) i`, [EXPIRED]);
  await pool.query(`INSERT INTO provider_state_owners (id, org_id, route, issued_at_ms)
    SELECT 'resp_new_' || i, 'org_b', 'vendor_a', ${T0} + i FROM generate_series(1, $1::int) i`, [KEPT]);
  const deletes: number[] = [];
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<pg.QueryResult>;
  (pool as unknown as { query: unknown }).query = async (...args: unknown[]) => {
    const result = await query(...args);
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
    if (/^\s*DELETE/i.test(text)) { deletes.push(result.rowCount ?? 0); afterDelete?.(pool, deletes.length); }
    return result;
  };
  return { pool, deletes };
}

test('the prune deletes a backlog PRUNE_ROWS rows per statement', { skip }, async () => {
  const s = await seeded();
  try {
    const rows = postgresStateOwnerRows(s.pool);
    assert.equal(await rows.prune(T0), EXPIRED);
    assert.ok(s.deletes.length >= Math.ceil(EXPIRED / PRUNE_ROWS), `${s.deletes.length} statements`);
    assert.ok(s.deletes.every((n) => n <= PRUNE_ROWS), `rows per statement: ${s.deletes.join(', ')}`);
    assert.equal(await rows.ownerOf('resp_new_1', 'vendor_a'), 'org_b');
    assert.equal(await rows.ownerOf('resp_old_1', 'vendor_a'), undefined);
    assert.equal(await rows.prune(T0), 0);
  } finally { await s.pool.end(); }
});

test('a prune running when the pool is ended stops between batches and answers what it deleted', { skip }, async () => {
  let ended: Promise<void> | undefined;
  const s = await seeded((pool, statements) => { if (statements === 1) ended = pool.end(); });
  const rows = postgresStateOwnerRows(s.pool);
  const deleted = await rows.prune(T0);   // resolves: no query on an ended pool
  await ended;
  assert.equal(deleted, PRUNE_ROWS, 'the prune stopped after its first batch');
});
