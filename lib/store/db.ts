// The embedded data folder: one SQLite file in WAL mode, shared by the org store and the ledger.
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export type DB = Database.Database;

/** The start waits this long for another connection's write lock (nothing is served yet): another
 *  process's start may be migrating the schema, which takes as long as the file is large. */
const START_BUSY_TIMEOUT_MS = 5_000;

export function openDatabase(dataDir: string): DB {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(databaseFile(dataDir));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${START_BUSY_TIMEOUT_MS}`);   // until it serves: lib/sqlite-lock.ts serveWithShortLockWaits
  db.pragma('foreign_keys = ON');
  // A reader that holds a transaction open (an operator's sqlite3 shell, a long backup) stops every
  // checkpoint short of the WAL's end, so the WAL grows with every write meanwhile (≈ 9 MB/s under
  // load) and SQLite keeps the file at its largest ever. With a limit, the first write after a
  // complete checkpoint truncates it back to this size.
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
  return db;
}

/** Bytes the WAL file is truncated back to once a checkpoint has caught up (PRAGMA journal_size_limit). */
export const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

/** The data folder's database, as an absolute path (the default ./data depends on the working directory). */
export const databaseFile = (dataDir: string): string => resolve(dataDir, 'gateway.db');

/** Files only a gateway that had a database leaves in the data folder: the provider keys' secret
 *  (written after gateway.db, without GATEWAY_SECRET_KEY), the WAL, `make run`'s demo org. Not the
 *  simulator's key: it is written before the store opens (and on PostgreSQL too), so a start that
 *  died early, or a folder once used with GATEWAY_DATABASE_URL, holds it without a database. */
const EARLIER_STATE = ['secret.key', 'gateway.db-wal', 'demo-org'];

/** A start refused because of what the data folder holds, said in an operator's terms. */
export class DataFolderRefused extends Error {}

/** Refuses to start over on an empty database where an earlier gateway kept its state: SQLite
 *  creates a missing gateway.db without a word, so a deleted or truncated file, or a wrong
 *  GATEWAY_DATA_DIR beside an old secret.key, served with every organization gone. Called before
 *  the start writes anything into the folder. `newDatabase` (GATEWAY_NEW_DATABASE=1) says an empty
 *  database is what the operator wants. */
export function refuseLostDatabase(dataDir: string, newDatabase: boolean): void {
  const file = databaseFile(dataDir);
  if (newDatabase || (statSync(file, { throwIfNoEntry: false })?.size ?? 0) > 0) return;
  const earlier = EARLIER_STATE.filter((name) => existsSync(join(dataDir, name)));
  if (earlier.length === 0) return;
  const state = existsSync(file) ? 'is empty (0 bytes)' : 'is missing';
  throw new DataFolderRefused(`${file} ${state}, but its folder holds ${earlier.join(', ')} from an earlier gateway: `
    + 'starting would serve a new, empty database (every organization, key and balance gone). Restore gateway.db '
    + 'from a backup (README "The data folder"), check GATEWAY_DATA_DIR, or set GATEWAY_NEW_DATABASE=1 to start empty on purpose.');
}
