// The state owners table in the embedded SQLite file (lib/store/state-owners.ts).
import type { DB } from './db.ts';
import type { StateOwnerRow, StateOwnerRows } from './state-owners.ts';

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
  const prune = db.prepare<[number]>('DELETE FROM provider_state_owners WHERE issued_at_ms < ?');
  return {
    async insert(rows) { insertAll(rows); },
    async ownerOf(id, route) { return owner.get(id, route) as string | undefined; },
    async prune(beforeMs) { return prune.run(beforeMs).changes; },
  };
}
