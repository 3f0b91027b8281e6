// SQLite's write lock held by another connection, met without freezing the process. Ground floor:
// the ledger, the usage records and the stores all write the one SQLite file.
import type { Database } from 'better-sqlite3';

// better-sqlite3 answers synchronously: a write waiting for the file's write lock, held by another
// connection (the other gateway process on this folder, an operator's sqlite3 session, a VACUUM),
// waits with the whole process: every stream, /healthz, own-key requests. With a busy_timeout of
// 5 s, an operator's open transaction froze the process for as long as it stayed open, 5 s per
// write, one write after another. So once serving, a write waits at most BUSY_TIMEOUT_MS inside
// SQLite, and a writer that can wait longer tries again with the event loop free in between
// (retryWhileLocked), for at most LOCK_PATIENCE_MS; past that it gives up as each writer says.

/** How long one write may block the event loop waiting for the lock. Another gateway process
 *  holds it well under a millisecond per admission turn, and longest for a usage batch of 500
 *  records (7 ms typical, 21 ms seen on a loaded machine); this covers that and a pause of that
 *  process (a GC) mid-transaction. */
export const BUSY_TIMEOUT_MS = 50;

/** How long a write that can wait keeps trying while the lock stays held, the loop free between
 *  tries: an admission is refused (503) after this, not after the lock is released. */
export const LOCK_PATIENCE_MS = 500;

/** The wait before the next try after `failures` tries refused by the lock in a row (10, 20, 40,
 *  80, then 100 ms: a lock held for minutes costs the loop one BUSY_TIMEOUT_MS per 100 ms). */
export const lockRetryDelayMs = (failures: number): number => Math.min(10 * 2 ** failures, 100);

/** The start is over (the ledger's schema is migrated): from now on writes wait briefly. */
export function serveWithShortLockWaits(db: Database): void {
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
}

/** Whether a write failed because another connection held the file's lock past the busy timeout:
 *  passing, nothing written, the same write may be tried again. */
export const isLocked = (err: unknown): boolean => /^SQLITE_BUSY/.test(String((err as { code?: unknown } | null)?.code));

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a synchronous write; refused by the lock, tries it again after lockRetryDelayMs (the loop
 *  free meanwhile) until LOCK_PATIENCE_MS have passed, then throws the lock's error. */
export async function retryWhileLocked<T>(write: () => T): Promise<T> {
  const since = performance.now();
  for (let failures = 0; ; failures++) {
    try {
      return write();
    } catch (err) {
      if (!isLocked(err) || performance.now() - since >= LOCK_PATIENCE_MS) throw err;
    }
    await pause(lockRetryDelayMs(failures));
  }
}
