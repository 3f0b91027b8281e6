// A worker thread with its own better-sqlite3 connection, admitting against a shared file.
// Waits on a barrier so every worker starts at once, then reports what it was admitted.
import { workerData, parentPort } from 'node:worker_threads';
import { openSqliteLedger } from '../../lib/ledger/sqlite.ts';
import { openDb, CONFIG } from './helpers.ts';

const { file, orgId, attempts, hold, settleCost, nowMs, barrier } = workerData as {
  file: string; orgId: string; attempts: number; hold: number; settleCost: number | null; nowMs: number; barrier: SharedArrayBuffer;
};

const db = openDb(file);
const ledger = openSqliteLedger(db, CONFIG);
const flag = new Int32Array(barrier);
Atomics.add(flag, 1, 1);
Atomics.wait(flag, 0, 0); // released by the main thread once every worker is ready

const admitted: string[] = [];
const refused: Record<string, number> = {};
for (let i = 0; i < attempts; i++) {
  const r = await ledger.admit({ orgId, holdMicroUsd: hold, route: 'vendor_a', nowMs });
  if (r.ok) {
    admitted.push(r.holdId);
    if (settleCost !== null) await ledger.settle(r.holdId, settleCost, nowMs);
  } else {
    refused[r.code] = (refused[r.code] ?? 0) + 1;
  }
}
db.close();
parentPort!.postMessage({ admitted, refused });
