// Shared fixtures for the ledger tests: the same contract suite runs once per adapter — a real
// SQLite file in a temp dir, and (when the server answers) a real PostgreSQL database — with a
// ramp schedule and two pools.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { ManualClock } from '../../lib/clock.ts';
import { openSqliteLedger } from '../../lib/ledger/sqlite.ts';
import { openPostgresLedger } from '../../lib/ledger/postgres.ts';
import type { HoldOwner, Ledger, LedgerConfig } from '../../lib/ledger/types.ts';
import { createTestDatabase, postgresReachable, testPool, type TestDatabase } from '../helpers/postgres.ts';

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
  ledger: Ledger;
  clock: ManualClock;
  /** Another connection (and ledger) on the same store: another process's view. */
  reopen(config?: LedgerConfig, owner?: HoldOwner): Promise<{ ledger: Ledger }>;
  close(): Promise<void>;
}

/** SQLite fixtures also expose the file and connection (restart and worker-thread tests). */
export interface SqliteFixture extends Fixture {
  file: string;
  db: Database.Database;
}

export function fixture(config: LedgerConfig = CONFIG): SqliteFixture {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-test-'));
  const file = join(dir, 'gateway.db');
  const db = openDb(file);
  const extra: Database.Database[] = [];
  return {
    file,
    db,
    ledger: openSqliteLedger(db, config),
    clock: new ManualClock(),
    async reopen(c = config, owner) {
      const d = openDb(file);
      extra.push(d);
      return { ledger: openSqliteLedger(d, c, owner) };
    },
    async close() {
      for (const d of [db, ...extra]) if (d.open) d.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One adapter of the contract suite: `setup` once per file, `fixture` once per test. */
export interface Adapter {
  name: 'sqlite' | 'postgres';
  setup(): Promise<void>;
  fixture(config?: LedgerConfig): Promise<Fixture>;
  teardown(): Promise<void>;
}

const sqliteAdapter: Adapter = {
  name: 'sqlite',
  async setup() {},
  async fixture(config) { return fixture(config); },
  async teardown() {},
};

/** One database per test file, emptied before each test; each "process" is its own pool. */
function postgresAdapter(tag: string): Adapter {
  let db: TestDatabase | undefined;
  const pools: pg.Pool[] = [];
  const newPool = (): pg.Pool => { const p = testPool(db!.url, 6); pools.push(p); return p; };
  return {
    name: 'postgres',
    async setup() { db = await createTestDatabase(tag, { migrated: true }); },
    async fixture(config = CONFIG) {
      const pool = pools[0] ?? newPool();
      await pool.query('TRUNCATE ledger_orgs, ledger_holds, ledger_daily_spend, ledger_pool_windows, ledger_entries, ledger_processes, flex_race_slots RESTART IDENTITY');
      return {
        ledger: openPostgresLedger(pool, config, { processId: randomUUID() }),
        clock: new ManualClock(),
        async reopen(c = config, owner) { return { ledger: openPostgresLedger(newPool(), c, owner ?? { processId: randomUUID() }) }; },
        async close() {},
      };
    },
    async teardown() {
      await Promise.all(pools.map((p) => p.end()));
      await db?.drop();
    },
  };
}

/** SQLite always; PostgreSQL when the test server answers (required under CI). */
export async function adapters(tag: string): Promise<Adapter[]> {
  return (await postgresReachable()) ? [sqliteAdapter, postgresAdapter(tag)] : [sqliteAdapter];
}

/** An org topped up with `cash` micro-USD at the clock's time (so in ramp week 1). */
export async function fundedOrg(f: Fixture, orgId: string, cash: number, credit = 0): Promise<void> {
  await f.ledger.ensureOrg(orgId, f.clock.now());
  await f.ledger.topup(orgId, { cash_micro_usd: cash, credit_micro_usd: credit }, f.clock.now());
}

/** A pid no process has: a child that has exited (and been reaped). */
export function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid!;
}

/** The pid of a process alive as long as this test: the test runner that started it. */
export const livePid = (): number => process.ppid;

export const admit = (f: Fixture, orgId: string, hold: number, route: 'vendor_a' | 'cloud_a' = 'vendor_a') =>
  f.ledger.admit({ orgId, holdMicroUsd: hold, route, nowMs: f.clock.now() });

export function okHold(r: Awaited<ReturnType<Ledger['admit']>>): string {
  if (!r.ok) throw new Error(`expected admission, got ${r.code}`);
  return r.holdId;
}
