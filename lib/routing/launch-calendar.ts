// The hedges this process has planned, by time (issue 9: deadlines met under bursts). A hedge
// point D − L assumes the standard attempt launched then is sent at once and its first event is
// handled at once. When many requests arrived together with the same start_within (a batch job,
// a queue drained at once), their hedges fall on the same instant, and the process launches them,
// and handles their commits, one after the other: the last ones come late. 2,000 such requests
// on one process, a 10 s deadline, flex never starting, standard answering in 100 ms: every hedge
// fired at 9.5 s, standard's first event came 656 ms (p50) to 949 ms (p99) after its launch, and
// 978 to 1,690 of the 2,000 missed their deadline (bench/hedge-burst.ts, six rounds).
//
// So each hedge is booked in a calendar of short slots, each with room for the launches the
// process can do in it at its own measured cost; a hedge whose slot is full takes the latest
// earlier one with room. Hedges that do not crowd keep their point exactly: a slot of 50 ms holds
// a dozen hedges or more. With this, the same burst missed none in six rounds.
import { performance } from 'node:perf_hooks';

export const SLOT_MS = 50;
/** Share of the event loop the planned launches may take; the rest is for arrivals, streams and
 *  everything else the process does meanwhile. */
const LOOP_SHARE = 0.8;
/** A hedged request costs the process about twice a plain one in the window the calendar plans:
 *  its standard attempt's launch and commit, and the abort of its flex attempt, where a plain
 *  request's cost is spread from its arrival to its answer's end. */
const RACE_FACTOR = 2;

/** The event loop's busy time per request over the last window of one to five seconds, from node's
 *  own event loop utilization and a count of the requests sent upstream (refusals such as 401s
 *  cost little and would dilute it): what one more launch costs this process. */
export class LoopCost {
  private at: number;
  private active: number;
  private requests: number;
  private measuredAt: number;
  private perRequestMs: number;

  /** `sent`: requests sent upstream since the process started; `priorMs` until a window has seen
   *  enough of them; `loop`: the time and the loop's busy time so far, in ms (tests give their own). */
  constructor(
    private readonly sent: () => number, private readonly priorMs = PRIOR_MS,
    private readonly loop: { now(): number; active(): number } = NODE_LOOP,
  ) {
    this.at = this.measuredAt = loop.now();
    this.active = loop.active();
    this.requests = sent();
    this.perRequestMs = priorMs;
  }

  /** The current estimate, without closing a window (GET /admin/v1/scheduler). */
  get lastMs(): number { return this.perRequestMs; }

  ms(): number {
    const at = this.loop.now();
    const window = at - this.at;
    if (window < 1_000) return this.perRequestMs;
    const active = this.loop.active(), n = this.sent() - this.requests;
    // A window of a handful of requests measures the idle process, and a long one (closed only
    // when a hedge asks, after a quiet spell) its timers and flushes: neither is a request's cost.
    if (n >= 20 && window <= 5_000) {
      this.perRequestMs = Math.min(5, Math.max(0.05, (active - this.active) / n));
      this.measuredAt = at;
    } else if (at - this.measuredAt > STALE_MS) {
      // An estimate a minute old says little about the process now: the prior again.
      this.perRequestMs = this.priorMs;
    }
    this.at = at;
    this.active = active;
    this.requests += n;
    return this.perRequestMs;
  }
}

const STALE_MS = 60_000;

/** Per request, before a window has measured it: 0.75 ms, above the 0.38–0.46 ms measured over a
 *  burst on the 2-core test host (bench/hedge-burst.ts). A burst arriving at a cold process is
 *  planned with it, and a plan that counts too little per hedge does not hold (bench/README.md). */
const PRIOR_MS = 0.75;

const NODE_LOOP = { now: () => performance.now(), active: () => performance.eventLoopUtilization().active };

export class LaunchCalendar {
  /** Launches planned per slot (slot = floor(t / SLOT_MS)), slots not yet past. */
  private readonly planned = new Map<number, number>();
  private pruneBelow = -Infinity;

  constructor(readonly cost: { ms(): number; readonly lastMs?: number }) {}

  /** Hedges one slot holds at a cost per request (the process's current one by default). */
  room(costMs = this.cost.ms()): number {
    return Math.max(1, Math.floor((SLOT_MS * LOOP_SHARE) / (RACE_FACTOR * costMs)));
  }

  /** Books a launch at the latest slot at or before `at` with room, not before `now`'s slot, and
   *  returns the slot and the time to launch: `at` itself when its own slot has room, the end of an
   *  earlier slot, or now when none from now on has room. */
  book(at: number, now: number): { slot: number; at: number } {
    this.prune(now);
    const room = this.room();
    const first = Math.floor(now / SLOT_MS);
    let slot = Math.floor(at / SLOT_MS);
    while (slot > first && (this.planned.get(slot) ?? 0) >= room) slot--;
    const planned = this.planned.get(slot) ?? 0;
    this.planned.set(slot, planned + 1);
    // Every slot from now on is full: at once.
    if (planned >= room) return { slot, at: now };
    return { slot, at: Math.max(now, Math.min(at, (slot + 1) * SLOT_MS - 1)) };
  }

  /** A booked launch that will not happen at its slot (launched, re-planned, or its request ended). */
  release(slot: number): void {
    // A slot already forgotten may be booked again only if the clock went back: the count there
    // is another request's.
    if (slot < this.pruneBelow - 1) return;
    const n = this.planned.get(slot);
    if (n === undefined) return;
    if (n <= 1) this.planned.delete(slot); else this.planned.set(slot, n - 1);
  }

  /** Planned launches in slots not yet past (for tests and GET /admin/v1/scheduler). */
  get size(): number {
    let n = 0;
    for (const v of this.planned.values()) n += v;
    return n;
  }

  /** Slots already past are forgotten (a booking whose launch ran late is released by its owner
   *  anyway; this keeps the map from growing when one is not). At most once per slot. */
  private prune(now: number): void {
    const current = Math.floor(now / SLOT_MS);
    if (current <= this.pruneBelow) return;
    this.pruneBelow = current;
    for (const slot of this.planned.keys()) if (slot < current - 1) this.planned.delete(slot);
  }
}
