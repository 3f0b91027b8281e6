// The SQLite usage store's retention prune on a backlog: it deletes PRUNE_ROWS records per
// statement and lets the event loop turn between statements (docs/usage.md "Bounds"), so an hour
// of expired records does not hold every stream and request of the process; close() during a
// running prune stops it between batches, before the caller closes the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../lib/store/db.ts';
import { PRUNE_ROWS, openSqliteUsageStore } from '../../lib/usage/sqlite.ts';
import type { UsageRecord } from '../../lib/usage/record.ts';

const T0 = Date.UTC(2026, 10, 20, 12);
const EXPIRED = 10 * PRUNE_ROWS + 123;   // eleven batches
const KEPT = 50;

const rec = (i: number, atMs: number): UsageRecord => ({
  id: `req-${i}`, org_id: `org_${i % 3}`, key_id: 'key_1', at_ms: atMs, started_at_ms: atMs - 50,
  format: 'responses', model: 'gpt-5.4', requested_route: 'vendor_a', served_route: 'vendor_a', tier: 'standard',
  reason: 'deadline', retries: 0, fallbacks: 0, status: 200, error_code: null,
  input_tokens: 10, cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: 5, reasoning_tokens: 0,
  usage_estimated: false, cost_micro_usd: 100, standard_cost_micro_usd: 100, key_mode: 'managed',
  time_to_commit_ms: 20, duration_ms: 50, client_closed: false, deadline_met: null,
});

/** A store holding EXPIRED records before T0 (one an hour's worth of milliseconds apart) and KEPT after. */
async function seeded() {
  const dir = mkdtempSync(join(tmpdir(), 'usage-prune-'));
  const db = openDatabase(dir);
  const store = openSqliteUsageStore(db);
  const records: UsageRecord[] = [];
  for (let i = 0; i < EXPIRED; i++) records.push(rec(i, T0 - 3_600_000 + Math.floor(i * 3_600_000 / EXPIRED)));
  for (let i = 0; i < KEPT; i++) records.push(rec(EXPIRED + i, T0 + i));
  await store.insert(records);
  const count = (): number => db.prepare('SELECT COUNT(*) FROM usage_records').pluck().get() as number;
  return { db, store, count, done() { if (db.open) db.close(); rmSync(dir, { recursive: true, force: true }); } };
}

/** Counts turns of the event loop (check phase) until stopped. */
function turns() {
  let n = 0;
  let running = true;
  const tick = (): void => { if (running) { n++; setImmediate(tick); } };
  setImmediate(tick);
  return { stop(): number { running = false; return n; } };
}

test('the prune deletes a backlog in batches of PRUNE_ROWS, the event loop turning between them', async () => {
  const s = await seeded();
  try {
    let firedBefore = false;
    let finished = false;
    setImmediate(() => { firedBefore = !finished; });   // scheduled before the prune starts
    const loop = turns();
    const deleted = await s.store.prune(T0);
    finished = true;
    const seen = loop.stop();
    assert.equal(deleted, EXPIRED);
    assert.equal(s.count(), KEPT);
    assert.ok(firedBefore, 'a callback scheduled before the prune ran before the prune finished');
    // One turn at least between two batches: eleven batches, ten turns.
    assert.ok(seen >= Math.ceil(EXPIRED / PRUNE_ROWS) - 1, `the event loop turned ${seen} times during the prune`);
    assert.equal(await s.store.prune(T0), 0);
  } finally { s.done(); }
});

test('close() during a running prune stops it between batches; the caller then closes the file', async () => {
  const s = await seeded();
  try {
    const running = s.store.prune(T0);
    await new Promise((resolve) => setImmediate(resolve));   // a batch or two are done
    await s.store.close();
    const left = s.count();
    s.db.close();                                             // as lib/app.ts does after usage.close()
    const deleted = await running;                            // resolves: no statement on a closed file
    assert.ok(deleted > 0 && deleted < EXPIRED, `the prune stopped early (${deleted} of ${EXPIRED} deleted)`);
    assert.equal(left, EXPIRED + KEPT - deleted);
  } finally { s.done(); }
});
