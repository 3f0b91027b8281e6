// The bounded in-memory queue between the request path and the usage store (issue 10). push() is
// O(1) and allocation-free beyond the caller's one object: a fixed ring buffer. Batches are
// flushed on a timer, or as soon as a full batch waits. A full queue drops the record (counted
// in gateway_usage_records_dropped_total and summarised in one log line per flush), so a
// request is never slowed or failed by its record. A batch the store refuses is dropped (counted),
// except one refused by another connection's lock on the SQLite file (an operator's sqlite3
// session, a VACUUM): that passes, so the batch is kept and tried again at each flush, for up to
// LOCKED_BATCH_KEPT_MS. close() flushes everything left.
import type { Logger } from '../log.ts';
import type { Counter, Gauge } from 'prom-client';
import { isLocked } from '../sqlite-lock.ts';
import { type RequestEnd, type UsageRecord, recordOf } from './record.ts';
import type { UsageStore } from './store.ts';

/** How long a batch refused by the lock is kept and tried again (once per flush) before it is
 *  dropped like any refused batch. Meanwhile the queue behind it fills and drops past capacity. */
const LOCKED_BATCH_KEPT_MS = 60_000;

export interface UsageQueueOptions {
  capacity: number;
  batchSize: number;
  flushIntervalMs: number;
  /** LOCKED_BATCH_KEPT_MS unless given (tests). */
  lockedBatchKeptMs?: number;
}

export interface UsageQueueMetrics { dropped: Counter; written: Counter; depth: Gauge }

export class UsageQueue {
  private readonly ring: Array<RequestEnd | undefined>;
  private head = 0;
  private size = 0;
  private droppedSinceLog = 0;
  private flushing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private immediate = false;
  /** The batch the lock refused, tried again before any other; since when (real time). */
  private held: { records: UsageRecord[]; since: number } | undefined;

  constructor(private readonly store: UsageStore, private readonly opts: UsageQueueOptions,
    private readonly metrics: UsageQueueMetrics, private readonly log: Logger) {
    this.ring = new Array(opts.capacity);
    // The depth is read when the gauge is scraped: set on every push it would be prom-client work on
    // the request path, and set only after a batch (as it was) it always read 0.
    // (prom-client runs a metric's `collect` before each read; its typings only name it in the options.)
    (metrics.depth as Gauge & { collect?: () => void }).collect = () => { metrics.depth.set(this.depth); };
    this.timer = setInterval(() => { void this.flush(); }, opts.flushIntervalMs);
    this.timer.unref();
  }

  /** Records waiting to be written (a batch kept after the lock refused it included). */
  get depth(): number { return this.size + (this.held?.records.length ?? 0); }

  /** Hands one ended request to the queue; false (and counted) when the queue is full. */
  push(end: RequestEnd): boolean {
    const cap = this.opts.capacity;
    if (this.size === cap) {
      this.droppedSinceLog++;
      this.metrics.dropped.inc();
      return false;
    }
    this.ring[(this.head + this.size) % cap] = end;
    this.size++;
    // Not while a batch waits for the lock: it is tried at the next flush, not at every push.
    if (this.size >= this.opts.batchSize && !this.immediate && !this.held) {
      this.immediate = true;
      setImmediate(() => { this.immediate = false; void this.flush(); });
    }
    return true;
  }

  /** Writes what is queued, one batch at a time; concurrent calls share the running flush. */
  flush(): Promise<void> {
    if (!this.flushing) this.flushing = this.drain().finally(() => { this.flushing = undefined; });
    return this.flushing;
  }

  private async drain(): Promise<void> {
    if (this.droppedSinceLog) {
      this.log.warn({ dropped: this.droppedSinceLog, capacity: this.opts.capacity }, 'usage queue full: records dropped');
      this.droppedSinceLog = 0;
    }
    if (this.held) {
      const { records, since } = this.held;
      this.held = undefined;
      if (!await this.write(records, since, true)) return;
    }
    while (this.size > 0) {
      const count = Math.min(this.size, this.opts.batchSize);
      const batch = new Array(count);
      for (let i = 0; i < count; i++) {
        const at = (this.head + i) % this.opts.capacity;
        batch[i] = recordOf(this.ring[at]!);
        this.ring[at] = undefined;
      }
      this.head = (this.head + count) % this.opts.capacity;
      this.size -= count;
      if (!await this.write(batch, performance.now(), false)) return;
    }
  }

  /** Writes one batch; false when the lock refused it and it is kept (the flush stops there, so
   *  the batches behind it keep their order). */
  private async write(records: UsageRecord[], since: number, retry: boolean): Promise<boolean> {
    try {
      await this.store.insert(records);
      this.metrics.written.inc(records.length);
      return true;
    } catch (err) {
      if (isLocked(err) && performance.now() - since < (this.opts.lockedBatchKeptMs ?? LOCKED_BATCH_KEPT_MS)) {
        this.held = { records, since };
        if (!retry) this.log.warn({ err: { message: (err as Error).message }, kept: records.length },
          'usage records not written (the database is locked by another connection): kept, retrying at the next flush');
        return false;
      }
      // A store that cannot be written loses this batch (counted), never the requests.
      this.metrics.dropped.inc(records.length);
      this.log.error({ err, dropped: records.length }, 'usage records could not be written: dropped');
      return true;
    }
  }

  /** Graceful shutdown: stop the timer and write everything queued; a batch the lock still
   *  refuses then is dropped (counted). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    if (this.size || this.held) await this.flush();
    if (this.held) {
      const dropped = this.held.records.length + this.size;
      this.held = undefined;
      this.ring.fill(undefined);
      this.size = 0;
      this.metrics.dropped.inc(dropped);
      this.log.error({ dropped }, 'usage records not written at shutdown (the database is locked by another connection): dropped');
    }
  }
}
