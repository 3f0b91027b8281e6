// One store interface, two adapters (design.md "Ledger storage"): organizations, API keys, provider
// keys, the ledger and flex race slots. Without GATEWAY_DATABASE_URL the embedded SQLite file in
// the data folder; with `postgres://…` the shared PostgreSQL database, for several gateways.
import { statSync } from 'node:fs';
import type pg from 'pg';
import type { Clock } from '../clock.ts';
import type { GatewayConfig } from '../config.ts';
import type { Logger } from '../log.ts';
import type { HoldOwner, Ledger } from '../ledger/types.ts';
import { openSqliteLedger } from '../ledger/sqlite.ts';
import { loggedSettleReports } from '../ledger/settle-retry.ts';
import { FlexSlots, type FlexSlotCounter } from '../routing/flex-slots.ts';
import { databaseFile, openDatabase, type DB } from './db.ts';
import { isLocked } from '../sqlite-lock.ts';
import { OrgStore } from './orgs.ts';
import { secretBoxFor } from './secrets.ts';
import { sqliteOrgRows } from './sqlite-orgs.ts';
import { StateOwners } from './state-owners.ts';
import { sqliteStateOwnerRows } from './sqlite-state-owners.ts';

export interface Store {
  kind: 'sqlite' | 'postgres';
  /** The SQLite file and connection (embedded adapter only). */
  file?: string;
  sqlite?: DB;
  /** The shared database's connection pool (PostgreSQL adapter only; the usage store writes through it). */
  pool?: pg.Pool;
  orgs: OrgStore;
  ledger: Ledger;
  flexSlots: FlexSlotCounter;
  /** Which org each provider-held id issued on a managed route belongs to. */
  stateOwners: StateOwners;
  /** Whether the database answers now (`/readyz`). */
  ready(): Promise<boolean>;
  /** Why the embedded database was last found not ready (`/readyz`'s `database`): a write did not
   *  go through (`unwritable`), another connection held the write lock (`locked`), it reported
   *  damage (`damaged`), or the file at its path is no longer the one opened (`deleted`,
   *  `replaced`). PostgreSQL's ready() asks the server: `unreachable`. */
  degraded?(): SqliteTrouble | undefined;
  /** Told of an error a request ended on, so a damaged file is noticed where it shows. */
  observe?(err: unknown): void;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** Whose holds these are (instance stable across restarts, process new at each start). */
  owner: HoldOwner;
  /** `postgres://…` selects the shared adapter; undefined the embedded one. */
  databaseUrl?: string;
  dataDir: string;
  secret?: string;
  /** Secrets a rotation moves away from: they still open provider keys, never seal one. */
  previousSecrets?: string[];
  config: GatewayConfig;
  clock: Clock;
  log: Logger;
}

export async function openStore(opts: StoreOptions): Promise<Store> {
  if (opts.databaseUrl) {
    if (!/^postgres(ql)?:\/\//.test(opts.databaseUrl)) throw new Error('GATEWAY_DATABASE_URL must be a postgres:// URL');
    const { openPostgresStore } = await import('./postgres.ts');
    return openPostgresStore({ ...opts, databaseUrl: opts.databaseUrl });
  }
  return openSqliteStore(opts);
}

function openSqliteStore(opts: StoreOptions): Store {
  const file = databaseFile(opts.dataDir);
  const created = !(statSync(file, { throwIfNoEntry: false })?.size);
  const db = openDatabase(opts.dataDir);
  // A file this user cannot write (restored as root, a read-only volume) opens read-only without a
  // word and then failed every write, while /readyz said ready: one real write now stops the start
  // instead (lib/main.ts says why). Rewriting user_version, which nothing else uses, changes nothing.
  const probe = (): void => { db.pragma(`user_version = ${Number(db.pragma('user_version', { simple: true }))}`); };
  try {
    probe();
  } catch (err) {
    db.close();
    throw err;
  }
  // Which files this process writes: a deleted or replaced one (the folder removed, a backup copied
  // over it, the WAL deleted) is noticed by /readyz. The WAL exists while a connection is open.
  const opened = [file, `${file}-wal`].map((path) => ({ path, stat: statSync(path) }));
  opts.log.info({ file, created }, created ? 'store: SQLite, a new empty database' : 'store: SQLite');
  const ledger = openSqliteLedger(db, opts.config.ledger, opts.owner, loggedSettleReports(opts.log));
  const stateOwners = new StateOwners(sqliteStateOwnerRows(db), opts.clock, opts.log);
  // What /readyz last found, said in the log once per change.
  let trouble: SqliteTrouble | undefined;
  const report = (now: SqliteTrouble | undefined, path: string, err?: unknown): SqliteTrouble | undefined => {
    if (now === trouble || trouble === 'damaged') return trouble;   // damage does not heal
    const code = (err as { code?: string } | undefined)?.code;
    const message = (err as Error | undefined)?.message;
    if (now === 'deleted' || now === 'replaced') {
      opts.log.error({ file: path }, `${path} was ${now} while this process runs: what it writes now goes to a file `
        + 'no later start opens. Stop it and restore gateway.db (README "The data folder")');
    } else if (now === 'damaged') {
      opts.log.error({ file, code }, `${file} is damaged: restore it from a backup (README "The data folder")`);
    } else if (now === 'locked') {
      opts.log.warn({ file, code }, `${file} is locked by another connection: managed requests and admin writes wait for it`);
    } else if (now === 'unwritable') {
      opts.log.error({ file, code, err: { message } }, `${file} cannot be written: /readyz is degraded until a write succeeds`);
    } else opts.log.info({ file }, `${file} is written again`);
    return trouble = now;
  };
  // Asked by /readyz only (nothing on the request path): are the files still the ones opened (two
  // stats), and does a write go through? The write is tried at most once per PROBE_EVERY_MS
  // whoever asks, so a probe storm neither blocks the loop nor grows the WAL; in between, its last
  // answer stands. One try, its wait for another connection's lock bounded by the busy timeout
  // (50 ms): a lock still held is `locked`, not a broken file.
  let probedAt = -Infinity;
  let written: SqliteTrouble | undefined;
  const degraded = (): SqliteTrouble | undefined => {
    if (trouble === 'damaged') return trouble;
    for (const { path, stat } of opened) {
      const found = statSync(path, { throwIfNoEntry: false });
      const moved = !found ? 'deleted' : found.ino !== stat.ino || found.dev !== stat.dev ? 'replaced' : undefined;
      if (moved) return report(moved, path);
    }
    const now = opts.clock.now();
    if (now - probedAt >= PROBE_EVERY_MS) {
      probedAt = now;
      try {
        probe();
        written = undefined;
      } catch (err) {
        written = isLocked(err) ? 'locked' : sqliteFailure(err) ?? 'unwritable';
        return report(written, file, err);
      }
    }
    return report(written, file);
  };
  return {
    kind: 'sqlite',
    file,
    sqlite: db,
    orgs: new OrgStore(sqliteOrgRows(db), secretBoxFor(opts.dataDir, opts.secret, opts.previousSecrets)),
    ledger,
    flexSlots: new FlexSlots(opts.config.flex_race_slots),
    stateOwners,
    ready: async () => db.open && degraded() === undefined,
    degraded: () => trouble,
    // The store's error a request ended on (its 500, or a 503 store_unavailable): damage SQLite
    // reports there makes the store degraded for good.
    observe(err) { if (sqliteFailure(err) === 'damaged') report('damaged', file, err); },
    async close() {
      await stateOwners.close();
      await ledger.close();
      db.close();
    },
  };
}

export type SqliteTrouble = 'unwritable' | 'locked' | 'damaged' | 'deleted' | 'replaced';

/** How often /readyz writes its probe at most; between probes it answers what the last one found. */
const PROBE_EVERY_MS = 1_000;

/** What an error's SQLite result code says of the file: damaged, or not writable now (disk full,
 *  read-only, an I/O error, locked past busy_timeout); undefined for the statement's own errors (a
 *  constraint) and anything not SQLite's. */
export function sqliteFailure(err: unknown): 'damaged' | 'unwritable' | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  if (/^SQLITE_(CORRUPT|NOTADB)/.test(code)) return 'damaged';
  if (/^SQLITE_(FULL|READONLY|IOERR|CANTOPEN|PERM|BUSY|LOCKED)/.test(code)) return 'unwritable';
  return undefined;
}
