/** Time is injected everywhere it matters (deadlines, backoff, UTC day, ramp week, leases). */
export interface Clock { now(): number }
export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private t = Date.UTC(2026, 10, 21, 12, 0, 0)) {}
  now(): number { return this.t; }
  set(ms: number): void { this.t = ms; }
  advance(ms: number): void { this.t += ms; }
}
