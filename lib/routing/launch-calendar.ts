// The hedges this process has planned, by time (issue 9: deadlines met under bursts). A hedge
// point D − L assumes the standard attempt launched then is sent at once and its first event is
// handled at once. When many requests arrived together with the same start_within (a batch job,
// a queue drained at once), their hedges fall on the same instant, and the process launches them,
// and handles their commits, one after the other: the last ones come late. 2,000 such requests
// on one process, a 10 s deadline, flex never starting, standard answering in 100 ms: every hedge
// fired at 9.5 s, standard's first event came 656 ms (p50) to 949 ms (p99) after its launch, and
// 978 to 1,559 of the 2,000 missed their deadline (bench/hedge-burst.ts, four rounds).
//
// So each hedge is booked in a calendar of short slots, each with room for the launches the
// process can do in it at its own measured cost; a hedge whose slot is full takes the latest
// earlier one with room. Hedges that do not crowd keep their point exactly: a slot of 50 ms holds
// a dozen hedges or more. With this, the same burst missed none in four rounds.
import { performance } from 'node:perf_hooks';

export const SLOT_MS = 50;
/** Share of the event loop the planned launches may take; the rest is for arrivals, streams and
 *  everything else the process does meanwhile. */
const LOOP_SHARE = 0.8;
/** A hedged request costs the process about twice a plain one in the window the calendar plans:
 *  its standard attempt's launch and commit, and the abort of its flex attempt, where a plain
 *  request's cost is spread from its arrival to its answer's end. */
const RACE_FACTOR = 2;

/** The event loop's busy time per request over the last second or more, from node's own event loop
 *  utilization and a count of the requests begun: what one more launch costs this process. */
export class LoopCost {
  private at: number;
  private active: number;
  private requests: number;
  private perRequestMs: number;

  /** `begun`: requests begun since the process started; `priorMs` until a window has seen enough
   *  of them; `loop`: the time and the loop's busy time so far, in ms (tests give their own). */
  constructor(
    private readonly begun: () => number, priorMs = PRIOR_MS,
    private readonly loop: { now(): number; active(): number } = NODE_LOOP,
  ) {
    this.at = loop.now();
    this.active = loop.active();
    this.requests = begun();
    this.perRequestMs = priorMs;
  }

  ms(): number {
    const at = this.loop.now();
    if (at - this.at < 1_000) return this.perRequestMs;
    const active = this.loop.active(), n = this.begun() - this.requests;
    // A window with a handful of requests measures the idle process, not a request's cost; and a
    // quiet process's timers and flushes are not a request's cost either: bounded to [0.02, 5] ms.
    if (n >= 20) this.perRequestMs = Math.min(5, Math.max(0.02, (active - this.active) / n));
    this.at = at;
    this.active = active;
    this.requests += n;
    return this.perRequestMs;
  }
}

/** Per request, before a window has measured it: 0.75 ms, above the 0.38–0.46 ms measured over a
 *  burst on the 2-core test host (bench/hedge-burst.ts). A burst arriving at a cold process is
 *  planned with it, and a plan that counts too little per hedge does not hold (bench/README.md). */
const PRIOR_MS = 0.75;

const NODE_LOOP = { now: () => performance.now(), active: () => performance.eventLoopUtilization().active };

export class LaunchCalendar {
  /** Launches planned per slot (slot = floor(t / SLOT_MS)), slots not yet past. */
  private readonly planned = new Map<number, number>();
  private pruneBelow = -Infinity;

  constructor(readonly cost: { ms(): number }) {}

  /** Hedges one slot holds at the process's current cost per request. */
  room(): number {
    return Math.max(1, Math.floor((SLOT_MS * LOOP_SHARE) / (RACE_FACTOR * this.cost.ms())));
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
