// The state owners table in SQLite (lib/store/sqlite-state-owners.ts): the hourly prune deletes
// PRUNE_ROWS rows per statement with the event loop turning between statements, and stops between
// batches once the file is closed (the store's close), instead of failing on a closed connection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../lib/store/db.ts';
import { PRUNE_ROWS, sqliteStateOwnerRows } from '../../lib/store/sqlite-state-owners.ts';
import type { StateOwnerRow } from '../../lib/store/state-owners.ts';

const T0 = Date.UTC(2026, 10, 20, 12);
const EXPIRED = 10 * PRUNE_ROWS + 77;   // eleven batches
const KEPT = 20;

async function seeded() {
  const dir = mkdtempSync(join(tmpdir(), 'state-owners-'));
  const db = openDatabase(dir);
  const rows = sqliteStateOwnerRows(db);
  const all: StateOwnerRow[] = [];
  for (let i = 0; i < EXPIRED; i++) all.push({ id: `resp_old_${i}`, orgId: 'org_a', route: 'vendor_a', issuedAtMs: T0 - 3_600_000 + i });
  for (let i = 0; i < KEPT; i++) all.push({ id: `resp_new_${i}`, orgId: 'org_b', route: 'vendor_a', issuedAtMs: T0 + i });
  await rows.insert(all);
  const count = (): number => db.prepare('SELECT COUNT(*) FROM provider_state_owners').pluck().get() as number;
  return { db, rows, count, done() { if (db.open) db.close(); rmSync(dir, { recursive: true, force: true }); } };
}

test('the prune deletes a backlog in batches of PRUNE_ROWS, the event loop turning between them', async () => {
  const s = await seeded();
  try {
    let finished = false;
    let firedBefore = false;
    let turns = 0;
    setImmediate(() => { firedBefore = !finished; });   // scheduled before the prune starts
    const tick = (): void => { if (!finished) { turns++; setImmediate(tick); } };
    setImmediate(tick);
    const deleted = await s.rows.prune(T0);
    finished = true;
    assert.equal(deleted, EXPIRED);
    assert.equal(s.count(), KEPT);
    assert.ok(firedBefore, 'a callback scheduled before the prune ran before the prune finished');
    assert.ok(turns >= Math.ceil(EXPIRED / PRUNE_ROWS) - 1, `the event loop turned ${turns} times during the prune`);
    assert.equal(await s.rows.ownerOf('resp_new_0', 'vendor_a'), 'org_b');
    assert.equal(await s.rows.ownerOf('resp_old_0', 'vendor_a'), undefined);
  } finally { s.done(); }
});

test('a prune running when the file is closed stops between batches and answers what it deleted', async () => {
  const s = await seeded();
  try {
    const running = s.rows.prune(T0);
    await new Promise((resolve) => setImmediate(resolve));   // a batch or two are done
    const left = s.count();
    s.db.close();                                             // the store's close (lib/store/store.ts)
    const deleted = await running;                            // resolves: no statement on a closed file
    assert.ok(deleted > 0 && deleted < EXPIRED, `the prune stopped early (${deleted} of ${EXPIRED} deleted)`);
    assert.equal(left, EXPIRED + KEPT - deleted);
  } finally { s.done(); }
});
