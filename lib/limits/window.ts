// A sliding-window counter per key: two fixed 60 s buckets (previous, current) and the estimate
// previous × (part of the previous window still inside the last 60 s) + current. O(1) per call,
// integer arithmetic only, and memory bounded: keys idle for two windows are swept a few per call.
import type { Clock } from '../clock.ts';

interface Bucket { start: number; prev: number; cur: number }

export class SlidingWindowCounter {
  // Map iteration order = order of the last roll to a new window, so stale keys sit at the front.
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limit: number | null,
    private readonly clock: Clock,
    private readonly windowMs = 60_000,
    private readonly maxKeys = 1_000_000,
  ) {}

  /** 0 when one more event fits now, else the whole seconds (>= 1) until it would. */
  wait(key: string): number {
    if (this.limit === null) return 0;
    const now = this.clock.now();
    const bucket = this.current(key, now);
    if (!bucket) return 0;
    return waitSeconds(bucket, this.limit, this.windowMs, now);
  }

  /** Counts one event (whether or not it fits). */
  add(key: string): void {
    if (this.limit === null) return;
    const now = this.clock.now();
    const bucket = this.current(key, now) ?? this.create(key, now);
    bucket.cur += 1;
  }

  /** Counts the event when it fits; returns 0 if counted, else the seconds to wait. */
  take(key: string): number {
    const waitS = this.wait(key);
    if (waitS === 0) this.add(key);
    return waitS;
  }

  get size(): number { return this.buckets.size; }

  /** The key's bucket rolled to the window of `now`, or undefined when it has no recent events. */
  private current(key: string, now: number): Bucket | undefined {
    this.sweep(now);
    const bucket = this.buckets.get(key);
    if (!bucket) return undefined;
    const start = now - (now % this.windowMs);
    if (bucket.start === start) return bucket;
    if (bucket.start === start - this.windowMs) { bucket.prev = bucket.cur; bucket.cur = 0; } else { bucket.prev = 0; bucket.cur = 0; }
    bucket.start = start;
    this.buckets.delete(key); // move to the back: it now belongs to the newest window
    if (bucket.prev === 0) return undefined; // nothing left in the last 60 s
    this.buckets.set(key, bucket);
    return bucket;
  }

  private create(key: string, now: number): Bucket {
    const bucket = { start: now - (now % this.windowMs), prev: 0, cur: 0 };
    if (this.buckets.size >= this.maxKeys) {
      const oldest = this.buckets.keys().next();
      if (!oldest.done) this.buckets.delete(oldest.value);
    }
    this.buckets.set(key, bucket);
    return bucket;
  }

  /** Drops up to two keys whose events are all older than the previous window. */
  private sweep(now: number): void {
    const stale = now - (now % this.windowMs) - this.windowMs;
    for (let i = 0; i < 2; i++) {
      const first = this.buckets.entries().next();
      if (first.done || first.value[1].start >= stale) return;
      this.buckets.delete(first.value[0]);
    }
  }
}

/** Seconds until prev × (W − e) + cur × W < limit × W, W = the window (`windowMs`), e = elapsed in
 *  the current window. */
function waitSeconds(bucket: Bucket, limit: number, windowMs: number, now: number): number {
  const { prev, cur } = bucket;
  const elapsed = now - bucket.start;
  if (prev * (windowMs - elapsed) + cur * windowMs < limit * windowMs) return 0;
  let ms: number;
  if (cur < limit) {
    // Fits later in this window, once enough of the previous window has slid out:
    // smallest integer e with prev × (W − e) < (limit − cur) × W.
    const fitsAt = windowMs - Math.ceil(((limit - cur) * windowMs) / prev) + 1;
    ms = fitsAt - elapsed;
  } else {
    // Only in the next window, where cur becomes prev: smallest e with cur × (W − e) < limit × W.
    const fitsAt = limit === 0 ? windowMs : windowMs - Math.ceil((limit * windowMs) / cur) + 1;
    ms = windowMs - elapsed + fitsAt;
  }
  return Math.max(1, Math.ceil(ms / 1000));
}
