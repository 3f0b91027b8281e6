// Settlements the database did not take, written again until it does. A failed settlement is for
// a request already served: dropped, its hold would lapse charged only what its last renewal
// recorded (nothing for a short request). The write fails when the SQLite file's write lock is
// held past the busy timeout (another process) or PostgreSQL is unreachable, so both adapters
// queue it here, with the time it ended so it counts on that day, and write it again until the
// database takes it: at once when the adapter says the database answered another write (a queued
// hold still counts against the org's concurrency and reserved, so every second after recovery
// is a request refused), else after a wait; close tries once more and reports what is still owed.
// Settlement is idempotent per hold, so writing again one that did land (its answer lost) charges
// nothing twice.
import type { Logger } from '../log.ts';

export interface Settlement { holdId: string; cost: number; nowMs: number }

/** How an adapter tells its opener about settlements the database did not take (no secrets). */
export interface SettleReports {
  /** A settlement could not be written and was queued for retry. */
  onSettleDeferred?: (holdId: string, costMicroUsd: number, err: unknown) => void;
  /** At close: the queued settlements still not written, lost to this process (their holds lapse). */
  onSettleLost?: (lost: Settlement[], err: unknown) => void;
  /** The wait before the next retry after `failures` failed rounds in a row. */
  settleRetryDelayMs?: (failures: number) => number;
}

/** The reports as log lines: hold ids and amounts, the error's message only. */
export const loggedSettleReports = (log: Logger): SettleReports => ({
  onSettleDeferred: (hold, cost, err) => log.warn(
    { hold, cost_micro_usd: cost, err: { message: (err as Error).message } }, 'settlement deferred: not written, retrying'),
  onSettleLost: (lost, err) => log.error(
    { count: lost.length, holds: lost.map((s) => s.holdId), cost_micro_usd: lost.reduce((sum, s) => sum + s.cost, 0),
      err: { message: (err as Error | undefined)?.message } },
    'settlements not written at close: their holds lapse charged only what their last renewal recorded'),
});

// SQLite's: a round refused by another connection's write lock has blocked the event loop for up
// to the short busy timeout at each try (lib/sqlite-lock.ts), so rounds back off (1, 2, 4 ... 30 s).
const backoff = (failures: number): number => Math.min(1_000 * 2 ** failures, 30_000);

/** PostgreSQL's: a refused round costs one failed connection attempt and only one is ever in
 *  flight (a connection that hangs waits out its timeout first), so a long outage is no busy loop. */
export const everySecond = (): number => 1_000;

export interface SettlementRetry {
  defer(settlement: Settlement, err: unknown): void;
  /** The database took another write: the queued settlements go now, not at the next round. */
  answered(): void;
  /** Stops retrying, writes what is queued once more and reports what still failed. */
  close(): Promise<void>;
}

/** `write` is the adapter's settlement (its group commit puts a round's writes in one transaction). */
export function retryingSettlements(write: (s: Settlement) => Promise<unknown>, reports: SettleReports = {}): SettlementRetry {
  const delayMs = reports.settleRetryDelayMs ?? backoff;
  const queued = new Map<string, Settlement>();
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> | undefined;
  let closing = false;
  let closed = false;

  /** Writes every queued settlement at once and keeps those that failed; answers the last error. */
  const writeQueued = async (): Promise<unknown> => {
    let error: unknown;
    await Promise.all([...queued.values()].map((s) => write(s).then(() => { queued.delete(s.holdId); }, (err) => { error = err; })));
    return error;
  };

  const runRound = (): void => {
    clearTimeout(timer);
    timer = undefined;
    round = writeQueued().then(() => {
      round = undefined;
      failures = queued.size === 0 ? 0 : failures + 1;
      schedule();
    });
  };

  const schedule = (): void => {
    if (queued.size === 0 || closing || timer || round) return;
    timer = setTimeout(runRound, delayMs(failures)).unref();
  };

  return {
    defer(settlement, err) {
      // A write that failed after close had its last chance: owed, and said so.
      if (closed) { reports.onSettleLost?.([settlement], err); return; }
      queued.set(settlement.holdId, settlement);
      reports.onSettleDeferred?.(settlement.holdId, settlement.cost, err);
      schedule();
    },

    answered() {
      if (queued.size > 0 && !closing && !round) runRound();
    },

    async close() {
      closing = true;
      clearTimeout(timer);
      timer = undefined;
      await round;
      const err = queued.size > 0 ? await writeQueued() : undefined;
      closed = true;
      if (queued.size > 0) reports.onSettleLost?.([...queued.values()], err);
      queued.clear();
    },
  };
}
