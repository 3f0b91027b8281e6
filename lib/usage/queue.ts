// The bounded in-memory queue between the request path and the usage store (issue 10). push() is
// O(1) and allocation-free beyond the caller's one object: a fixed ring buffer. Batches are
// flushed on a timer, or as soon as a full batch waits. A full queue drops the record (counted
// in gateway_usage_records_dropped_total and summarised in one log line per flush), so a
// request is never slowed or failed by its record. close() flushes everything left.
import type { Logger } from '../log.ts';
import type { Counter, Gauge } from 'prom-client';
import { type RequestEnd, recordOf } from './record.ts';
import type { UsageStore } from './store.ts';

export interface UsageQueueOptions {
  capacity: number;
  batchSize: number;
  flushIntervalMs: number;
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

  constructor(private readonly store: UsageStore, private readonly opts: UsageQueueOptions,
    private readonly metrics: UsageQueueMetrics, private readonly log: Logger) {
    this.ring = new Array(opts.capacity);
    // The depth is read when the gauge is scraped: set on every push it would be prom-client work on
    // the request path, and set only after a batch (as it was) it always read 0.
    // (prom-client runs a metric's `collect` before each read; its typings only name it in the options.)
    (metrics.depth as Gauge & { collect?: () => void }).collect = () => { metrics.depth.set(this.size); };
    this.timer = setInterval(() => { void this.flush(); }, opts.flushIntervalMs);
    this.timer.unref();
  }

  get depth(): number { return this.size; }

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
    if (this.size >= this.opts.batchSize && !this.immediate) {
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
      try {
        await this.store.insert(batch);
        this.metrics.written.inc(count);
      } catch (err) {
        // A store that cannot be written loses this batch (counted), never the requests.
        this.metrics.dropped.inc(count);
        this.log.error({ err, dropped: count }, 'usage records could not be written: dropped');
      }
    }
  }

  /** Graceful shutdown: stop the timer and write everything queued. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    if (this.size) await this.flush();
  }
}
