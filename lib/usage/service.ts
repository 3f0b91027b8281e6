// Usage recording as one service: the store, the queue in front of it, and the background
// retention prune. Built once in lib/app.ts; the request path only calls push().
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { UsageQueue } from './queue.ts';
import type { RequestEnd } from './record.ts';
import type { UsageStore } from './store.ts';

export interface UsageConfig {
  retention_days: number;
  queue_capacity: number;
  batch_size: number;
  flush_interval_ms: number;
  prune_interval_ms: number;
}

export const DEFAULT_USAGE: UsageConfig = {
  retention_days: 30, queue_capacity: 10_000, batch_size: 500, flush_interval_ms: 1_000, prune_interval_ms: 3_600_000,
};

export class Usage {
  readonly queue: UsageQueue;
  private readonly pruneTimer: NodeJS.Timeout;

  constructor(readonly store: UsageStore, private readonly config: UsageConfig, metrics: Metrics,
    private readonly log: Logger, private readonly clock: Clock) {
    this.queue = new UsageQueue(
      store,
      { capacity: config.queue_capacity, batchSize: config.batch_size, flushIntervalMs: config.flush_interval_ms },
      { dropped: metrics.usageDropped, written: metrics.usageWritten, depth: metrics.usageQueueDepth },
      log,
    );
    this.pruneTimer = setInterval(() => { void this.prune(); }, config.prune_interval_ms);
    this.pruneTimer.unref();
    void this.prune();
  }

  push(end: RequestEnd): void { this.queue.push(end); }

  flush(): Promise<void> { return this.queue.flush(); }

  /** Deletes records older than the retention; logs how many. Never throws. */
  async prune(): Promise<number> {
    try {
      const deleted = await this.store.prune(this.clock.now() - this.config.retention_days * 86_400_000);
      if (deleted) this.log.info({ deleted, retention_days: this.config.retention_days }, 'usage records pruned');
      return deleted;
    } catch (err) {
      this.log.error({ err }, 'usage prune failed');
      return 0;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.pruneTimer);
    await this.queue.close();
    await this.store.close();
  }
}
