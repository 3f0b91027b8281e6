// The state owners table in the embedded SQLite file (lib/store/state-owners.ts).
import type { DB } from './db.ts';
import { retryWhileLocked } from '../sqlite-lock.ts';
import type { StateOwnerRow, StateOwnerRows } from './state-owners.ts';
import { batchedPrune } from '../batched-prune.ts';

/** Rows one statement of the prune deletes at most: the connection answers synchronously, so an
 *  hour of ids aging out in one DELETE would hold every stream and request of the process while
 *  it ran (as the usage prune did, lib/usage/sqlite.ts). */
export const PRUNE_ROWS = 2_000;

export function sqliteStateOwnerRows(db: DB): StateOwnerRows {
  db.exec(`
    CREATE TABLE IF NOT EXISTS provider_state_owners (
      id TEXT PRIMARY KEY, org_id TEXT NOT NULL, route TEXT NOT NULL, issued_at_ms INTEGER NOT NULL) STRICT;
    CREATE INDEX IF NOT EXISTS provider_state_owners_issued ON provider_state_owners (issued_at_ms);
  `);
  const insertOne = db.prepare<[string, string, string, number]>(
    'INSERT INTO provider_state_owners (id, org_id, route, issued_at_ms) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING');
  const insertAll = db.transaction((rows: StateOwnerRow[]) => {
    for (const r of rows) insertOne.run(r.id, r.orgId, r.route, r.issuedAtMs);
  });
  const owner = db.prepare<[string, string]>('SELECT org_id FROM provider_state_owners WHERE id = ? AND route = ?').pluck();
  // The oldest PRUNE_ROWS expired rows, found on the (issued_at_ms) index (a range of it, never a
  // scan of the table) and deleted by rowid.
  const pruneBatch = db.prepare<[number]>(`DELETE FROM provider_state_owners WHERE rowid IN
    (SELECT rowid FROM provider_state_owners WHERE issued_at_ms < ? ORDER BY issued_at_ms LIMIT ${PRUNE_ROWS})`);
  return {
    // Another connection's write lock is waited for briefly (lib/sqlite-lock.ts); past that the rows
    // stay pending in StateOwners and are tried again.
    async insert(rows) { await retryWhileLocked(() => insertAll.immediate(rows)); },
    async ownerOf(id, route) { return owner.get(id, route) as string | undefined; },
    // Once the file is closed (the store's close) it stops between batches, the rest left to the
    // next prune.
    prune: batchedPrune((beforeMs) => pruneBatch.run(beforeMs).changes, PRUNE_ROWS, () => db.open).prune,
  };
}
