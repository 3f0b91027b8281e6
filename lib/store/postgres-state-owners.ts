// The state owners table of the shared PostgreSQL database (migration 5, postgres-schema.ts), so
// every gateway process knows which org each managed id was issued to (lib/store/state-owners.ts).
import type pg from 'pg';
import type { StateOwnerRows } from './state-owners.ts';
import { batchedPrune } from '../batched-prune.ts';

export const STATE_OWNERS_DDL = `
CREATE TABLE IF NOT EXISTS provider_state_owners (
  id TEXT PRIMARY KEY, org_id TEXT NOT NULL, route TEXT NOT NULL, issued_at_ms BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS provider_state_owners_issued ON provider_state_owners (issued_at_ms);
`;

/** Rows one statement of the prune deletes at most: a single DELETE of a large backlog could run
 *  past the server's statement_timeout (12 s, lib/store/postgres.ts) and be rolled back at every
 *  prune (as lib/usage/postgres.ts explains). Rows another process's prune holds are skipped. */
export const PRUNE_ROWS = 10_000;
const PRUNE_BATCH = `DELETE FROM provider_state_owners WHERE id = ANY (ARRAY(SELECT id FROM provider_state_owners
  WHERE issued_at_ms < $1 ORDER BY issued_at_ms LIMIT ${PRUNE_ROWS} FOR UPDATE SKIP LOCKED))`;

export function postgresStateOwnerRows(pool: pg.Pool): StateOwnerRows {
  return {
    async insert(rows) {
      // One statement per batch: the columns as arrays, unnested.
      await pool.query({
        name: 'state_owners_insert',
        text: `INSERT INTO provider_state_owners (id, org_id, route, issued_at_ms)
          SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) ON CONFLICT (id) DO NOTHING`,
        values: [rows.map((r) => r.id), rows.map((r) => r.orgId), rows.map((r) => r.route), rows.map((r) => r.issuedAtMs)],
      });
    },
    async ownerOf(id, route) {
      const { rows } = await pool.query<{ org_id: string }>({
        name: 'state_owners_owner', text: 'SELECT org_id FROM provider_state_owners WHERE id = $1 AND route = $2', values: [id, route],
      });
      return rows[0]?.org_id;
    },
    // Stops between batches once the pool is ending (the store's close), the rest left to the next
    // prune, here or in another process.
    prune: batchedPrune(
      async (beforeMs) => (await pool.query({ name: 'state_owners_prune', text: PRUNE_BATCH, values: [beforeMs] })).rowCount ?? 0,
      PRUNE_ROWS, () => !pool.ending,
    ).prune,
  };
}
