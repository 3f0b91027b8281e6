// Which organization each provider-held state id belongs to, for ids issued on a managed route
// (docs/decisions.md, "Provider-held state on managed routes"). The service's one provider
// account holds every managed org's stored responses and interactions, so the provider cannot
// tell them apart: the gateway remembers who was handed each id and refuses the others.
//
// record() is synchronous and cheap (one Map entry): the id is looked up in that map until its
// row is written, so this process never misses an id it just issued. Rows are written in small
// batches on the next turn of the loop; the answer that carries the id ends only once its row is
// written (written()), so another process sharing the PostgreSQL database knows it by then. The
// one window left: a caller that names the id from a stream's first event (where it is recorded)
// on another process, within the insert's round trip. Rows older than the providers'
// retention are pruned every hour.
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';

/** Stored responses (vendor A, 30 days) and interactions are forgotten by the provider after
 *  this; an id older than it means nothing upstream either. */
export const STATE_RETENTION_MS = 30 * 86_400_000;
const PRUNE_INTERVAL_MS = 3_600_000;
const BATCH = 500;
/** Ids kept in memory while the database does not take them: past this the oldest is dropped
 *  (its org's follow-up is then refused like an unknown id: a refusal, never a leak). */
const PENDING_CAP = 100_000;

export interface StateOwnerRow { id: string; orgId: string; route: string; issuedAtMs: number }

/** The table behind it (SQLite or PostgreSQL). */
export interface StateOwnerRows {
  /** Inserts the rows; an id already there keeps its first owner. */
  insert(rows: StateOwnerRow[]): Promise<void>;
  /** The org the id was issued to on that route, if any. */
  ownerOf(id: string, route: string): Promise<string | undefined>;
  /** Deletes rows issued before `beforeMs`; how many. */
  prune(beforeMs: number): Promise<number>;
}

export class StateOwners {
  private readonly pending = new Map<string, StateOwnerRow>();
  private scheduled = false;
  private flushing: Promise<void> | undefined;
  private readonly pruneTimer: NodeJS.Timeout;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly rows: StateOwnerRows, private readonly clock: Clock, private readonly log: Logger) {
    this.pruneTimer = setInterval(() => { void this.prune(); }, PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
  }

  /** The id was handed to `orgId` on `route` (managed): known here at once, written on the next turn. */
  record(id: string, orgId: string, route: string): void {
    if (this.pending.size >= PENDING_CAP) this.pending.delete(this.pending.keys().next().value!);
    this.pending.set(id, { id, orgId, route, issuedAtMs: this.clock.now() });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => { this.scheduled = false; void this.flush(); });
  }

  /** Resolves once what was recorded so far is written (or failed, or after `maxMs`: a database
   *  that hangs must not hold an answer's end); at once when nothing is pending. */
  written(maxMs = 1_000): Promise<void> {
    if (!this.pending.size) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => { timer = setTimeout(resolve, maxMs); });
    return Promise.race([this.flush(), late]).finally(() => clearTimeout(timer));
  }

  /** The org the id was issued to on `route`, undefined when it is not known (never issued on a
   *  managed route, or older than the retention). Throws when the database cannot be read. */
  async ownerOf(id: string, route: string): Promise<string | undefined> {
    const waiting = this.pending.get(id);
    if (waiting) return waiting.route === route ? waiting.orgId : undefined;
    return this.rows.ownerOf(id, route);
  }

  /** Writes what is pending, a batch at a time; concurrent calls share the running flush. A batch
   *  the database refuses stays pending and is tried again a second later. */
  flush(): Promise<void> {
    this.flushing ??= this.drain().finally(() => { this.flushing = undefined; });
    return this.flushing;
  }

  private async drain(): Promise<void> {
    while (this.pending.size) {
      const batch: StateOwnerRow[] = [];
      for (const row of this.pending.values()) { batch.push(row); if (batch.length === BATCH) break; }
      try {
        await this.rows.insert(batch);
      } catch (err) {
        this.log.error({ err, pending: this.pending.size }, 'state owners could not be written: kept, retrying');
        if (!this.retry) {
          this.retry = setTimeout(() => { this.retry = undefined; void this.flush(); }, 1_000);
          this.retry.unref();
        }
        return;
      }
      // An id recorded again meanwhile (a newer row) stays pending.
      for (const row of batch) if (this.pending.get(row.id) === row) this.pending.delete(row.id);
    }
  }

  /** Deletes rows past the retention; logs how many. Never throws. */
  async prune(): Promise<number> {
    try {
      const deleted = await this.rows.prune(this.clock.now() - STATE_RETENTION_MS);
      if (deleted) this.log.info({ deleted }, 'state owners pruned');
      return deleted;
    } catch (err) {
      this.log.error({ err }, 'state owners prune failed');
      return 0;
    }
  }

  /** Stops the timers and writes what is pending (once more if a write failed). */
  async close(): Promise<void> {
    clearInterval(this.pruneTimer);
    clearTimeout(this.retry);
    await this.flush();
    if (this.pending.size) {
      await this.flush();
      if (this.pending.size) this.log.error({ lost: this.pending.size }, 'state owners not written at close');
    }
  }
}
