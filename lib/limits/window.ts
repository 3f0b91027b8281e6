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
    const b = this.current(key, now);
    if (!b) return 0;
    return waitSeconds(b, this.limit, this.windowMs, now);
  }

  /** Counts one event (whether or not it fits). */
  add(key: string): void {
    if (this.limit === null) return;
    const now = this.clock.now();
    const b = this.current(key, now) ?? this.create(key, now);
    b.cur += 1;
  }

  /** Counts the event when it fits; returns 0 if counted, else the seconds to wait. */
  take(key: string): number {
    const w = this.wait(key);
    if (w === 0) this.add(key);
    return w;
  }

  get size(): number { return this.buckets.size; }

  /** The key's bucket rolled to the window of `now`, or undefined when it has no recent events. */
  private current(key: string, now: number): Bucket | undefined {
    this.sweep(now);
    const b = this.buckets.get(key);
    if (!b) return undefined;
    const start = now - (now % this.windowMs);
    if (b.start === start) return b;
    if (b.start === start - this.windowMs) { b.prev = b.cur; b.cur = 0; } else { b.prev = 0; b.cur = 0; }
    b.start = start;
    this.buckets.delete(key); // move to the back: it now belongs to the newest window
    if (b.prev === 0) return undefined; // nothing left in the last 60 s
    this.buckets.set(key, b);
    return b;
  }

  private create(key: string, now: number): Bucket {
    const b = { start: now - (now % this.windowMs), prev: 0, cur: 0 };
    if (this.buckets.size >= this.maxKeys) {
      const oldest = this.buckets.keys().next();
      if (!oldest.done) this.buckets.delete(oldest.value);
    }
    this.buckets.set(key, b);
    return b;
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

/** Seconds until prev × (W − e) + cur × W < limit × W, e = elapsed in the current window. */
function waitSeconds(b: Bucket, limit: number, w: number, now: number): number {
  const elapsed = now - b.start;
  if (b.prev * (w - elapsed) + b.cur * w < limit * w) return 0;
  let ms: number;
  if (b.cur < limit) {
    // Fits later in this window, once enough of the previous window has slid out:
    // smallest integer e with prev × (W − e) < (limit − cur) × W.
    const e = w - Math.ceil(((limit - b.cur) * w) / b.prev) + 1;
    ms = e - elapsed;
  } else {
    // Only in the next window, where cur becomes prev: smallest e with cur × (W − e) < limit × W.
    const e = limit === 0 ? w : w - Math.ceil((limit * w) / b.cur) + 1;
    ms = w - elapsed + e;
  }
  return Math.max(1, Math.ceil(ms / 1000));
}
