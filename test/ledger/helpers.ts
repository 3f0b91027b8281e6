// Shared fixtures for the ledger tests: a real SQLite file in a temp dir, a ramp schedule, two pools.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ManualClock } from '../../lib/clock.ts';
import { openSqliteLedger } from '../../lib/ledger/sqlite.ts';
import type { Ledger, LedgerConfig } from '../../lib/ledger/types.ts';

export const DAY = 86_400_000;
export const WEEK = 7 * DAY;
export const USD = 1_000_000;

export const CONFIG: LedgerConfig = {
  ramp: [
    { week: 0, concurrency: 2, daily_spend_micro_usd: 1 * USD },
    { week: 1, concurrency: 4, daily_spend_micro_usd: 10 * USD },
    { week: 2, concurrency: 8, daily_spend_micro_usd: 50 * USD },
    { week: 4, concurrency: 16, daily_spend_micro_usd: 200 * USD },
  ],
  hold_lease_ms: 30_000,
  pools: [
    { name: 'direct', routes: ['vendor_a', 'vendor_b', 'vendor_c'], per_minute: 1000 },
    { name: 'cloud', routes: ['cloud_a', 'cloud_b'], per_minute: 3 },
  ],
};

export function openDb(file: string): Database.Database {
  const db = new Database(file, { timeout: 10_000 });
  db.pragma('journal_mode = WAL');
  return db;
}

export interface Fixture {
  file: string;
  db: Database.Database;
  ledger: Ledger;
  clock: ManualClock;
  /** Opens another connection (and ledger) on the same file. */
  reopen(config?: LedgerConfig): { db: Database.Database; ledger: Ledger };
  close(): void;
}

export function fixture(config: LedgerConfig = CONFIG): Fixture {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-test-'));
  const file = join(dir, 'gateway.db');
  const db = openDb(file);
  const extra: Database.Database[] = [];
  return {
    file,
    db,
    ledger: openSqliteLedger(db, config),
    clock: new ManualClock(),
    reopen(c = config) {
      const d = openDb(file);
      extra.push(d);
      return { db: d, ledger: openSqliteLedger(d, c) };
    },
    close() {
      for (const d of [db, ...extra]) if (d.open) d.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An org topped up with `cash` micro-USD at the clock's time (so in ramp week 1). */
export function fundedOrg(f: Fixture, orgId: string, cash: number, credit = 0): void {
  f.ledger.ensureOrg(orgId, f.clock.now());
  f.ledger.topup(orgId, { cash_micro_usd: cash, credit_micro_usd: credit }, f.clock.now());
}

export const admit = (f: Fixture, orgId: string, hold: number, route: 'vendor_a' | 'cloud_a' = 'vendor_a') =>
  f.ledger.admit({ orgId, holdMicroUsd: hold, route, nowMs: f.clock.now() });

export function okHold(r: ReturnType<Ledger['admit']>): string {
  if (!r.ok) throw new Error(`expected admission, got ${r.code}`);
  return r.holdId;
}
