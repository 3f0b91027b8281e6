// Moves one gateway's SQLite data folder into a new, empty PostgreSQL database, offline: the step
// from one process on the embedded store to several on the shared one (README, "Running several
// gateways"). Everything the SQLite file holds that PostgreSQL keeps is copied as it is (ids, key
// hashes, ledger entry ids and usage sequence numbers included), so API keys keep working, the
// balances and today's spend are what they were, GET /v1/usage reports the same history and
// previous_response_id continues the same conversations. Provider keys are the one thing that
// changes form: opened with the secret that sealed them, sealed again with the target's.
//
// Order of the work, so that a refusal or a failure leaves both sides as they were:
//   1. the source: nothing has it open, its schema is this build's, no hold is live, every
//      provider key opens with the source secret (the file is opened read-only: nothing here can
//      change it);
//   2. the target: its schema migrated as a gateway start does (lib/store/postgres.ts migrate),
//      then one transaction that checks it holds nothing, copies, verifies every organization's
//      money against the source, and commits only if all of it agrees.
import Database from 'better-sqlite3';
import pg from 'pg';
import { readdirSync, readlinkSync, realpathSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { LEDGER_SCHEMA_VERSION } from '../ledger/sqlite-schema.ts';
import { pidAlive, thisHost } from '../ledger/liveness.ts';
import { migrate } from './postgres.ts';
import { SecretBox } from './secrets.ts';

/** A condition under which the migration does nothing: the message says why and what to do. */
export class MigrationRefused extends Error {}

export interface MigrationOptions {
  /** The SQLite gateway's GATEWAY_DATA_DIR (its gateway.db). */
  dataDir: string;
  /** The secret the SQLite gateway sealed provider keys with ($dataDir/secret.key, or its GATEWAY_SECRET_KEY). */
  sourceSecret: string | undefined;
  /** postgres://…: an existing database; its tables are created here if missing. */
  databaseUrl: string;
  /** GATEWAY_SECRET_KEY of the PostgreSQL gateways: provider keys are sealed again with it. */
  targetSecret: string | undefined;
  /** One line of the summary (no secret and no database password ever reaches it). */
  print(line: string): void;
  /** The ledger's hold lease (ledger.hold_lease_ms): a process on another host whose heartbeat is
   *  younger than this may still be running on the file. */
  leaseMs?: number;
}

export interface MigrationSummary {
  /** Rows copied, per table. */
  rows: Record<string, number>;
  money: { orgs: number; cashMicroUsd: bigint; creditMicroUsd: bigint; dailySpendMicroUsd: bigint; usageCostMicroUsd: bigint };
}

/** Copied, in this order (organizations before the rows that reference them). The columns are the
 *  same on both sides; the representation of each is converted by the target column's type. */
export const COPIED_TABLES = [
  'orgs', 'api_keys', 'provider_keys',
  'ledger_orgs', 'ledger_holds', 'ledger_daily_spend', 'ledger_pool_windows', 'ledger_entries',
  'usage_records', 'provider_state_owners',
] as const;

/** SQLite tables left behind, and why. */
export const SQLITE_ONLY: Record<string, string> = {
  ledger_schema_version: 'PostgreSQL keeps its own (gateway_schema_migrations)',
  ledger_live_holds: 'derived by triggers from the live holds, of which there are none',
  ledger_processes: 'heartbeats of the stopped SQLite processes: they hold nothing and never run on PostgreSQL',
};

/** PostgreSQL tables the copy does not fill, and why. */
export const POSTGRES_ONLY: Record<string, string> = {
  gateway_schema_migrations: 'written by the schema migrations',
  flex_race_slots: 'SQLite counts flex race slots in memory, per process: none is stored',
  ledger_processes: 'each PostgreSQL gateway registers itself at start',
};

/** Rows per INSERT (column arrays, unnested): a large table goes in bounded statements. */
const BATCH_ROWS = 5_000;

/** Column types of the target the copy converts to; any other type is not one the schemas use. */
type Kind = 'text' | 'bigint' | 'integer' | 'boolean';
const KINDS = new Set<string>(['text', 'bigint', 'integer', 'boolean']);

type Value = string | bigint | number | null | Buffer;
type Row = Record<string, Value>;

export async function migrateSqliteToPostgres(opts: MigrationOptions): Promise<MigrationSummary> {
  const { print } = opts;
  if (!opts.targetSecret) {
    throw new MigrationRefused('GATEWAY_SECRET_KEY is not set: PostgreSQL gateways require it, and the provider keys are sealed with it');
  }
  const file = join(opts.dataDir, 'gateway.db');
  if (!existsSync(file)) throw new MigrationRefused(`no gateway.db in ${opts.dataDir} (GATEWAY_DATA_DIR)`);
  refuseIfOpenElsewhere(file);

  // Read-only: the migration cannot write the file (SQLite refuses every write on this handle).
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.defaultSafeIntegers(true);   // every INTEGER as a bigint: exact whatever its size
  try {
    db.exec('BEGIN');   // one read transaction: every table from the same state of the file
    checkSourceSchema(db);
    refuseIfRunning(db, opts.leaseMs ?? 30_000);
    refuseIfLiveHolds(db);
    const target = new SecretBox(opts.targetSecret);
    const resealed = sealedForTarget(db, opts.sourceSecret, opts.targetSecret);
    const source = sourceFigures(db);
    print(`source: ${file} (ledger schema ${LEDGER_SCHEMA_VERSION})`);

    const summary = await copyToPostgres(db, opts.databaseUrl, resealed, source, target, print);
    db.exec('COMMIT');
    return summary;
  } finally {
    db.close();
  }
}

// ── the source ─────────────────────────────────────────────────────────────────────────────────

/** Refuses while any process on this host has the file (or its WAL) open: a gateway running on it,
 *  in this process or another, or any tool writing it. Linux's /proc tells; elsewhere the
 *  ledger's process rows (refuseIfRunning) are the only sign. Checked before this migration opens
 *  the file itself. */
function refuseIfOpenElsewhere(file: string): void {
  const users = processesWithOpen(file);
  if (users.length) {
    throw new MigrationRefused(`${file} is open in process ${users.join(', ')}: stop the gateway (SIGTERM: it drains and settles) before migrating`);
  }
}

/** Pids of this host's processes whose open files include `file` or its WAL; [] without /proc.
 *  Processes whose descriptors cannot be read (another user's) are not listed: refuseIfRunning
 *  refuses on a gateway among them by its process row. */
function processesWithOpen(file: string): number[] {
  const targets = new Set([realpathSync(file), realpathSync(file) + '-wal']);
  let pids: string[];
  try { pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name)); } catch { return []; }
  const found: number[] = [];
  for (const pid of pids) {
    let fds: string[];
    try { fds = readdirSync(`/proc/${pid}/fd`); } catch { continue; }
    for (const fd of fds) {
      let target: string;
      try { target = readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { continue; }
      if (targets.has(target)) { found.push(Number(pid)); break; }
    }
  }
  return found;
}

/** Whether this host's process `pid` may have the file open: false when its descriptors say no;
 *  true when they cannot be read (another user's process, no /proc) and it is alive. */
function mayHaveOpen(pid: number): boolean {
  if (!pidAlive(pid)) return false;
  try { readdirSync(`/proc/${pid}/fd`); } catch { return true; }
  return false;   // readable: processesWithOpen already looked, and it was not among the users
}

/** The file must be at this build's schema: an older one is upgraded by starting this build's
 *  gateway on it once; a newer one, or a table or column this migration does not know, is left
 *  alone rather than half copied. */
function checkSourceSchema(db: Database.Database): void {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
  const version = tables.includes('ledger_schema_version')
    ? Number(db.prepare('SELECT COALESCE(MAX(version), 0) FROM ledger_schema_version').pluck().get() as bigint)
    : 0;
  if (version !== LEDGER_SCHEMA_VERSION) {
    throw new MigrationRefused(version > LEDGER_SCHEMA_VERSION
      ? `gateway.db was written by a newer build (ledger schema ${version}, this build ${LEDGER_SCHEMA_VERSION}): migrate with that build`
      : `gateway.db is at ledger schema ${version}, this build writes ${LEDGER_SCHEMA_VERSION}: start this build's gateway on it once (it upgrades the file), stop it, then migrate`);
  }
  const unknown = tables.filter((t) => !(COPIED_TABLES as readonly string[]).includes(t) && !(t in SQLITE_ONLY));
  if (unknown.length) throw new MigrationRefused(`gateway.db has tables this migration does not know (${unknown.join(', ')}): a newer build wrote it`);
  const missing = COPIED_TABLES.filter((t) => !tables.includes(t));
  if (missing.length) {
    throw new MigrationRefused(`gateway.db lacks ${missing.join(', ')}: start this build's gateway on it once (it creates them), stop it, then migrate`);
  }
}

/** A gateway that is running, or was stopped less than a lease ago on another host, is refused:
 *  it would write after the copy. Its process row says where it runs (lib/ledger/liveness.ts); a
 *  row of this host whose pid is alive with descriptors that cannot be read may be one. */
function refuseIfRunning(db: Database.Database, leaseMs: number): void {
  const rows = db.prepare('SELECT process_id, host, pid, heartbeat_at_ms FROM ledger_processes').all() as
    Array<{ process_id: string; host: string; pid: bigint; heartbeat_at_ms: bigint }>;
  const here = thisHost();
  const now = Date.now();
  for (const row of rows) {
    const pid = Number(row.pid);
    if (row.host === here) {
      if (pid !== process.pid && mayHaveOpen(pid)) {
        throw new MigrationRefused(`a gateway process (pid ${pid}) may be running on this data folder: stop it (SIGTERM) before migrating`);
      }
    } else if (Number(row.heartbeat_at_ms) + leaseMs > now) {
      throw new MigrationRefused(`a gateway on another host (${row.host.split('/')[0]}, pid ${pid}) renewed its heartbeat `
        + `${Math.max(0, now - Number(row.heartbeat_at_ms))} ms ago: stop it and wait ${leaseMs} ms before migrating`);
    }
  }
}

/** A live hold is a request in flight or the leftover of a process that did not stop cleanly: its
 *  cost is not settled yet, so the balance is not final. A gateway stopped with SIGTERM drains and
 *  settles every hold; a crashed one's are released by the next gateway on the file. */
function refuseIfLiveHolds(db: Database.Database): void {
  const live = db.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT org_id) AS orgs FROM ledger_holds WHERE expired_at_ms IS NULL').get() as
    { n: bigint; orgs: bigint };
  if (live.n > 0n) {
    throw new MigrationRefused(`${live.n} hold(s) of ${live.orgs} organization(s) are live: requests are in flight, or a gateway did not stop cleanly. `
      + 'Start the gateway on this data folder under the same GATEWAY_INSTANCE_ID (it releases a crashed predecessor\'s holds at once; '
      + 'other holds lapse after their lease), then stop it with SIGTERM and migrate');
  }
}

/** Every provider key opened with the source secret and sealed with the target's, before the target
 *  is touched: one key that does not open refuses the whole migration (named by org and route). */
function sealedForTarget(db: Database.Database, sourceSecret: string | undefined, targetSecret: string): Map<string, string> {
  const rows = db.prepare('SELECT org_id, route, sealed FROM provider_keys ORDER BY org_id, route').all() as
    Array<{ org_id: string; route: string; sealed: string }>;
  const resealed = new Map<string, string>();
  if (!rows.length) return resealed;
  if (!sourceSecret) throw new MigrationRefused('provider keys are stored but no source secret was given to open them');
  // The target's secret as current and the source's as previous: a rotation's reseal, so a key
  // already sealed with the target's secret (the same secret on both sides) goes as it is.
  const box = new SecretBox(targetSecret, [sourceSecret]);
  const unreadable: string[] = [];
  for (const row of rows) {
    try { resealed.set(providerKeyId(row), box.resealed(row.sealed) ?? row.sealed); } catch { unreadable.push(`${row.org_id}/${row.route}`); }
  }
  if (unreadable.length) {
    throw new MigrationRefused(`${unreadable.length} of ${rows.length} provider key(s) do not open with the source secret (${unreadable.slice(0, 5).join(', ')}`
      + `${unreadable.length > 5 ? ', …' : ''}): give the secret the SQLite gateway ran with (GATEWAY_SOURCE_SECRET_KEY; `
      + 'by default $GATEWAY_DATA_DIR/secret.key, else GATEWAY_SECRET_KEY)');
  }
  return resealed;
}

const providerKeyId = (row: Row): string => `${row.org_id}\0${row.route}`;

/** What the copy is checked against: each table's row count, each organization's money, each
 *  day's spend and the usage history's cost, read from the source in the same transaction. */
interface SourceFigures {
  counts: Record<string, bigint>;
  money: Map<string, { cash: bigint; credit: bigint }>;
  spend: Map<string, bigint>;        // "org\0day" → spent
  usageCost: bigint;
}

function sourceFigures(db: Database.Database): SourceFigures {
  const counts: Record<string, bigint> = {};
  for (const table of COPIED_TABLES) counts[table] = db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as bigint;
  const money = new Map<string, { cash: bigint; credit: bigint }>();
  for (const row of db.prepare('SELECT org_id, cash_micro_usd AS cash, credit_micro_usd AS credit FROM ledger_orgs').iterate() as
    Iterable<{ org_id: string; cash: bigint; credit: bigint }>) money.set(row.org_id, { cash: row.cash, credit: row.credit });
  const spend = new Map<string, bigint>();
  for (const row of db.prepare('SELECT org_id, day, spent_micro_usd AS spent FROM ledger_daily_spend').iterate() as
    Iterable<{ org_id: string; day: bigint; spent: bigint }>) spend.set(`${row.org_id}\0${row.day}`, row.spent);
  const usageCost = (db.prepare('SELECT COALESCE(SUM(cost_micro_usd), 0) FROM usage_records').pluck().get() as bigint);
  return { counts, money, spend, usageCost };
}

// ── the target ─────────────────────────────────────────────────────────────────────────────────

async function copyToPostgres(
  db: Database.Database, databaseUrl: string, resealed: Map<string, string>, source: SourceFigures, target: SecretBox,
  print: (line: string) => void,
): Promise<MigrationSummary> {
  // BIGINT read back as text (pg's default): compared with the source's bigints exactly. No
  // statement timeout: a large history is copied in one long transaction.
  const pool = new pg.Pool({ connectionString: databaseUrl, application_name: 'gateway-migrate', connectionTimeoutMillis: 10_000, max: 1 });
  pool.on('error', () => {});   // a lost idle connection fails the next query, which reports it
  try {
    await refuseIfTargetHoldsData(pool);
    const version = await migrate(pool).catch((err: Error) => {
      throw /newer than this build/.test(err.message) ? new MigrationRefused(`the target ${err.message}: migrate with that build`) : err;
    });
    print(`target: PostgreSQL database "${databaseName(databaseUrl)}", schema version ${version}`);
    const kinds = await targetColumns(pool);
    checkColumns(db, kinds);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      // Nothing may be written into the target meanwhile: a gateway already started on it waits
      // for the commit to create an organization, and sees the copied ones then.
      await client.query('LOCK TABLE orgs IN EXCLUSIVE MODE');
      await refuseIfTargetHoldsData(client);
      const rows: Record<string, number> = {};
      for (const table of COPIED_TABLES) rows[table] = await copyTable(db, client, table, kinds.get(table)!, resealed);
      const summary = await verify(client, source, rows, target, resealed.size);
      await continueSequences(client);
      await client.query('COMMIT');
      printSummary(print, summary);
      return summary;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
}

/** The database's name, never the URL (which may carry a password). */
function databaseName(url: string): string {
  try { return decodeURIComponent(new URL(url).pathname.slice(1)) || '(default)'; } catch { return '(unnamed)'; }
}

type Queryable = pg.Pool | pg.PoolClient;

/** Only into a database that holds nothing the copy writes: a second run, or a target already in
 *  service, is refused (by its rows, named with their counts). Tables not made yet hold nothing. */
async function refuseIfTargetHoldsData(db: Queryable): Promise<void> {
  const existing = (await db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ANY ($1)", [COPIED_TABLES])).rows;
  const held: string[] = [];
  for (const { table_name: table } of existing) {
    const { rows } = await db.query<{ n: string }>(`SELECT COUNT(*)::text AS n FROM ${table}`);
    if (rows[0]!.n !== '0') held.push(`${table}: ${rows[0]!.n}`);
  }
  if (held.length) {
    throw new MigrationRefused(`the target database already holds data (${held.join(', ')}): migrate into a new, empty database (createdb)`);
  }
}

/** Each table's columns and their types on the target, as this build's migrations made them. */
async function targetColumns(db: Queryable): Promise<Map<string, Map<string, Kind>>> {
  const { rows } = await db.query<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT table_name, column_name, data_type FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = ANY ($1)`, [COPIED_TABLES]);
  const tables = new Map<string, Map<string, Kind>>();
  for (const row of rows) {
    if (!KINDS.has(row.data_type)) throw new Error(`${row.table_name}.${row.column_name} is ${row.data_type}: the migration converts only ${[...KINDS].join(', ')}`);
    if (!tables.has(row.table_name)) tables.set(row.table_name, new Map());
    tables.get(row.table_name)!.set(row.column_name, row.data_type as Kind);
  }
  return tables;
}

/** Every column of every copied table exists on both sides: one on one side only would be lost or
 *  left to a default, so the migration stops (a file or database of another build). */
function checkColumns(db: Database.Database, kinds: Map<string, Map<string, Kind>>): void {
  for (const table of COPIED_TABLES) {
    const sqlite = (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
    const target = [...(kinds.get(table)?.keys() ?? [])];
    const onlySource = sqlite.filter((c) => !target.includes(c));
    const onlyTarget = target.filter((c) => !sqlite.includes(c));
    if (onlySource.length || onlyTarget.length) {
      throw new MigrationRefused(`${table} differs between gateway.db and the target schema`
        + `${onlySource.length ? ` (only in gateway.db: ${onlySource.join(', ')})` : ''}`
        + `${onlyTarget.length ? ` (only in PostgreSQL: ${onlyTarget.join(', ')})` : ''}: migrate with the build that wrote the file`);
    }
  }
}

/** Copies one table in statements of BATCH_ROWS rows (each column one array, unnested), converting
 *  each value to the target column's type; provider keys go re-sealed. Returns the rows copied. */
async function copyTable(
  db: Database.Database, client: pg.PoolClient, table: string, kinds: Map<string, Kind>, resealed: Map<string, string>,
): Promise<number> {
  const columns = [...kinds.keys()];
  const casts = columns.map((column, i) => `$${i + 1}::${kinds.get(column)}[]`).join(', ');
  const insert = `INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${casts})`;
  let batch: unknown[][] = columns.map(() => []);
  let pending = 0;
  let copied = 0;
  const flush = async (): Promise<void> => {
    if (!pending) return;
    await client.query(insert, batch);
    copied += pending;
    batch = columns.map(() => []);
    pending = 0;
  };
  for (const row of db.prepare(`SELECT ${columns.join(', ')} FROM ${table}`).iterate() as Iterable<Row>) {
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i]!;
      const value = table === 'provider_keys' && column === 'sealed' ? resealed.get(providerKeyId(row))! : row[column]!;
      batch[i]!.push(converted(value, kinds.get(column)!, table, column));
    }
    if (++pending === BATCH_ROWS) await flush();
  }
  await flush();
  return copied;
}

/** A SQLite value as the target column's type, exactly: integers as bigints (never through a
 *  double), 0/1 as booleans; anything else (a REAL where an integer belongs, a 2 in a boolean)
 *  stops the migration rather than being rounded or guessed. */
function converted(value: Value, kind: Kind, table: string, column: string): string | bigint | boolean | null {
  if (value === null) return null;
  const wrong = (): never => { throw new Error(`${table}.${column}: ${typeof value} value ${String(value).slice(0, 40)} does not convert to ${kind}`); };
  switch (kind) {
    case 'text': return typeof value === 'string' ? value : wrong();
    case 'boolean': return value === 0n ? false : value === 1n ? true : wrong();
    case 'integer':
      if (typeof value !== 'bigint' || value < -2147483648n || value > 2147483647n) wrong();
      return value as bigint;
    case 'bigint':
      if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);   // an INTEGER-affinity column holding a whole REAL
      return typeof value === 'bigint' ? value : wrong();
  }
}

/** Inside the copy's transaction, before it commits: every table has the source's row count, every
 *  organization its balance and credit, every day its spend, the usage history its cost, and every
 *  provider key opens with the target secret. A difference rolls everything back. */
async function verify(
  client: pg.PoolClient, source: SourceFigures, rows: Record<string, number>, target: SecretBox, providerKeys: number,
): Promise<MigrationSummary> {
  const problems: string[] = [];
  for (const table of COPIED_TABLES) {
    const n = (await client.query<{ n: string }>(`SELECT COUNT(*)::text AS n FROM ${table}`)).rows[0]!.n;
    if (n !== String(source.counts[table]) || rows[table] !== Number(source.counts[table])) {
      problems.push(`${table}: ${n} rows, the source has ${source.counts[table]}`);
    }
  }
  let cash = 0n;
  let credit = 0n;
  const orgs = (await client.query<{ org_id: string; cash: string; credit: string }>(
    'SELECT org_id, cash_micro_usd::text AS cash, credit_micro_usd::text AS credit FROM ledger_orgs')).rows;
  for (const org of orgs) {
    const was = source.money.get(org.org_id);
    if (!was || BigInt(org.cash) !== was.cash || BigInt(org.credit) !== was.credit) {
      problems.push(`${org.org_id}: cash ${org.cash} credit ${org.credit}, the source has ${was ? `${was.cash} / ${was.credit}` : 'no such organization'}`);
    }
    cash += BigInt(org.cash);
    credit += BigInt(org.credit);
  }
  if (orgs.length !== source.money.size) problems.push(`${orgs.length} ledger organizations, the source has ${source.money.size}`);
  let spent = 0n;
  const days = (await client.query<{ org_id: string; day: number; spent: string }>(
    'SELECT org_id, day, spent_micro_usd::text AS spent FROM ledger_daily_spend')).rows;
  for (const day of days) {
    if (source.spend.get(`${day.org_id}\0${day.day}`) !== BigInt(day.spent)) problems.push(`${day.org_id} day ${day.day}: spent ${day.spent}`);
    spent += BigInt(day.spent);
  }
  const usageCost = BigInt((await client.query<{ c: string }>('SELECT COALESCE(SUM(cost_micro_usd), 0)::text AS c FROM usage_records')).rows[0]!.c);
  if (usageCost !== source.usageCost) problems.push(`usage cost ${usageCost}, the source's ${source.usageCost}`);
  const sealed = (await client.query<{ sealed: string }>('SELECT sealed FROM provider_keys')).rows;
  let opened = 0;
  for (const row of sealed) { try { target.open(row.sealed); opened++; } catch { /* counted below */ } }
  if (opened !== providerKeys) problems.push(`${providerKeys - opened} provider key(s) do not open with GATEWAY_SECRET_KEY`);
  if (problems.length) throw new Error(`the copy does not match the source, nothing was committed: ${problems.slice(0, 10).join('; ')}`);
  return { rows, money: { orgs: orgs.length, cashMicroUsd: cash, creditMicroUsd: credit, dailySpendMicroUsd: spent, usageCostMicroUsd: usageCost } };
}

/** The copied ids keep their values, so each identity sequence goes on after the largest copied
 *  (setval is not undone by a rollback: it runs last, just before the commit). */
async function continueSequences(client: pg.PoolClient): Promise<void> {
  const { rows } = await client.query<{ table_name: string; column_name: string; sequence: string }>(`
    SELECT c.table_name, c.column_name, pg_get_serial_sequence(quote_ident(c.table_name), c.column_name) AS sequence
    FROM information_schema.columns c
    WHERE c.table_schema = current_schema() AND c.table_name = ANY ($1)
      AND pg_get_serial_sequence(quote_ident(c.table_name), c.column_name) IS NOT NULL`, [COPIED_TABLES]);
  for (const row of rows) {
    await client.query(`SELECT setval($1, COALESCE((SELECT MAX(${row.column_name}) FROM ${row.table_name}), 1),
      (SELECT COUNT(*) > 0 FROM ${row.table_name}))`, [row.sequence]);
  }
}

/** micro-USD as dollars with all six decimals (exact: integer arithmetic). */
export function usd(micro: bigint): string {
  const sign = micro < 0n ? '-' : '';
  const abs = micro < 0n ? -micro : micro;
  return `${sign}${abs / 1_000_000n}.${String(abs % 1_000_000n).padStart(6, '0')} USD`;
}

function printSummary(print: (line: string) => void, summary: MigrationSummary): void {
  print(`copied: ${COPIED_TABLES.map((table) => `${table} ${summary.rows[table]}`).join(', ')}`);
  const m = summary.money;
  print(`verified per organization (${m.orgs}): cash ${m.cashMicroUsd} micro-USD (${usd(m.cashMicroUsd)}), `
    + `credit ${m.creditMicroUsd} micro-USD (${usd(m.creditMicroUsd)}), daily spend over all days ${m.dailySpendMicroUsd} micro-USD (${usd(m.dailySpendMicroUsd)})`);
  print(`usage history: ${summary.rows.usage_records} records, cost ${m.usageCostMicroUsd} micro-USD (${usd(m.usageCostMicroUsd)})`);
  print(`not copied: ${Object.entries(SQLITE_ONLY).map(([table, why]) => `${table} (${why})`).join('; ')}`);
}
