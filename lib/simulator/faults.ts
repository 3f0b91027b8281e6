// Injected failures keyed by directive id: `fail: [429, 503]` answers the first attempt with 429,
// the second with 503, then lets attempts through. Counting is per id across routes and tiers, so
// a gateway's retry on another route or tier is the next attempt.
import type { Directive } from './directive.ts';

export class FailureSchedule {
  private readonly attempts = new Map<string, number>();

  /** The status this attempt must fail with, if any; counts the attempt. */
  next(d: Directive | undefined): number | undefined {
    if (!d?.fail?.length) return undefined;
    // Without an id, identical directives share a counter.
    const key = d.id ?? JSON.stringify(d);
    const n = this.attempts.get(key) ?? 0;
    this.attempts.set(key, n + 1);
    return d.fail[n];
  }
}
