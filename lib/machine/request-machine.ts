// The life of one inference request before and around its commit point: a flex attempt raced by a
// standard hedge, retries and fallbacks, each timer and attempt cancelled when the request no longer
// needs it, nothing sent to the caller before commit. Every request runs through this machine, a "now" request on one
// route as much as a flex race with retries and fallbacks. The machine hears about five lifecycle
// events per attempt; bytes never pass through it.
//
//   running ── attempt.committed ──► committed   (final: the responder drains the stream;
//     │                                            stop() still aborts the winner's upstream call)
//     │  entry: flex on routes[0] at once, standard when the hedge advisor says (at once, or
//     │  later); or standard at once; flex refusal → standard now; standard failure → retry after
//     │  backoff, then the next route
//     └── no attempt left ──► failed
//
// Kept cheap because every request pays for it (bench/README.md, "the machine"): xstate's own
// algorithm computes each transition, run by a small per-request runner (RequestRun, below)
// instead of an actor with its system and mailbox; attempts are plain handles held beside the
// snapshot (not child actors); the request settles once, when the machine reaches a final state;
// timers exist only for a race (the hedge) or a retry (the backoff); guards, actions and delays
// are named in setup(), so nothing is allocated per transition but xstate's own snapshot. A
// request is `running` from its arrival, whose entry action launches the first attempt. That
// first snapshot is the same for every request but for its context: made once, it spares each
// request xstate's initial transition (a pre-initial state, the context's assignment, the initial
// microstep), and the runner runs `running`'s entry actions on the request's context, as that
// microstep would (a test holds xstate's own actor to the same launches). A `"now"` request thus
// costs one transition of xstate's algorithm: its commit.
import { and, cancel, raise, setup, type ActorSystem, type AnyActorRef, type SnapshotFrom } from 'xstate';
import type { RouteName, Tier } from '../routes.ts';
import type { Failure } from '../providers/types.ts';
import { AttemptFailed, type Attempt, type Committed } from '../stream/attempt.ts';
import { backoffDelay, MAX_DELAY_MS, type RetryPolicy } from './backoff.ts';

export type FlexMode = 'race' | 'slots_full' | 'off';

export interface MachineInput {
  routes: RouteName[];
  flex: FlexMode;
  deadlineAt: number;                 // epoch ms: start_within from arrival
  /** When to launch standard in a flex race (lib/routing/flex-policy.ts). */
  hedge: HedgeAdvisor;
  retry?: RetryPolicy;
  now: () => number;
  random: () => number;
  /** Starts one upstream attempt: its commit (or AttemptFailed) and a way to abort it. */
  launch: (route: RouteName, tier: Tier) => Attempt;
}

/** The race policy, asked at arrival and at each wake-up it names: launch standard now (`at` ≤
 *  now) or sleep until `at` and ask again. `flexUnlikely`: launched because flex has too little
 *  chance to start in time (routing reason flex_unlikely when standard wins). */
export interface HedgeAdvisor {
  standardAt(now: number): { at: number; flexUnlikely: boolean };
  /** Nothing more will be asked: the hedge was cancelled (a tier committed, flex failed and
   *  standard runs) or the request ended. May be called more than once. */
  done?(): void;
}

/** The advisor of a request that does not race (the machine never asks it): standard now. */
export const NO_RACE: HedgeAdvisor = { standardAt: (now) => ({ at: now, flexUnlikely: false }) };

export interface Outcome {
  winner?: Committed;
  reason: string;                     // routing reason (README enumeration)
  routeIndex: number;
  retries: number;
  fallbacks: number;
  failure?: Failure;
}

/** Where each tier of the race stands. flex: `off` (no race), `racing`, `failed` (refused or
 *  broke), `stopped` (aborted: the route was left); standard: `idle` (not launched on this route),
 *  `running`, `backoff` (waiting to retry), `failed` (spent, while flex still races). */
type FlexState = 'off' | 'racing' | 'failed' | 'stopped';
type StandardState = 'idle' | 'running' | 'backoff' | 'failed';

/** The live attempts of one request, beside the actor: aborting them is the lifetime's job. */
type Attempts = Record<Tier, Attempt | null>;

interface Ctx {
  input: MachineInput;
  attempts: Attempts;
  flex: FlexState;
  standard: StandardState;
  hedged: boolean;                    // the standard hedge was launched while flex raced
  flexUnlikely: boolean;              // … at once, because the advisor judged flex unlikely
  routeIndex: number;
  retriesOnRoute: number;
  retries: number;
  fallbacks: number;
  reason: string;
  winner?: Committed;
  failure?: Failure;
}

type Ev =
  | { type: 'attempt.committed'; tier: Tier; committed: Committed }
  | { type: 'attempt.failed'; tier: Tier; failure: Failure }
  | { type: 'hedge' }
  | { type: 'retry' };

function initialContext(input: MachineInput): Ctx {
  return {
    input, attempts: { flex: null, standard: null },
    flex: 'off', standard: 'idle', hedged: false, flexUnlikely: false,
    routeIndex: 0, retriesOnRoute: 0, retries: 0, fallbacks: 0,
    reason: input.flex === 'race' ? 'flex_committed' : input.flex === 'slots_full' ? 'flex_slots_full' : 'standard_requested',
  };
}

/** Starts an attempt whose result comes back to the actor as an event. */
function launchAttempt(ctx: Ctx, self: { send(e: Ev): void }, tier: Tier): void {
  const route = ctx.input.routes[ctx.routeIndex]!;
  const attempt = ctx.input.launch(route, tier);
  ctx.attempts[tier] = attempt;
  attempt.committed.then(
    (committed) => { if (ctx.attempts[tier] === attempt) self.send({ type: 'attempt.committed', tier, committed }); },
    (err) => {
      if (ctx.attempts[tier] !== attempt) return;   // stopped: nobody waits for it
      const failure: Failure = err instanceof AttemptFailed ? err.failure
        : { kind: 'transient', status: 502, message: String(err?.message ?? err) };
      self.send({ type: 'attempt.failed', tier, failure });
    },
  );
}

function stopAttempt(a: Attempts, tier: Tier): void {
  const attempt = a[tier];
  a[tier] = null;
  attempt?.abort();
}

/** The routing reason when `tier` commits, from where the race stands. */
function reasonAt(ctx: Ctx, tier: Tier): string {
  if (ctx.routeIndex > 0) return 'fallback';
  if (ctx.input.flex !== 'race') return ctx.reason;
  if (tier === 'flex') return ctx.hedged ? 'flex_won' : 'flex_committed';
  return ctx.flex === 'failed' ? 'flex_unavailable' : ctx.flexUnlikely ? 'flex_unlikely' : 'flex_lost_race';
}

/** The standard tier, launched on the current route. */
function launchStandard(context: Ctx, self: { send(e: Ev): void }): void {
  context.standard = 'running';
  launchAttempt(context, self, 'standard');
}

/** Asks the advisor: launch standard now, or sleep until its next time. The wake-up is a delayed
 *  'hedge' event on the actor system's scheduler (what a delayed `raise` schedules; one at a time,
 *  by id, so `cancel('hedge')` stops it), set by a plain action: no enqueueActions per request. */
function askHedge(context: Ctx, self: AnyActorRef, system: ActorSystem<any>): void {
  const now = context.input.now();
  const d = context.input.hedge.standardAt(now);
  if (d.at > now) { system.scheduler.schedule(self, self, { type: 'hedge' }, d.at - now, 'hedge'); return; }
  context.flexUnlikely = d.flexUnlikely;
  context.hedged = true;
  launchStandard(context, self);
}

export const requestMachine = setup({
  types: { context: {} as Ctx, events: {} as Ev, input: {} as MachineInput },
  guards: {
    untimed: ({ context }) => context.input.flex !== 'race' && !context.input.retry,
    standardIdle: ({ context }) => context.standard === 'idle',
    flexFailedNothingLeft: ({ context, event }) =>
      event.type === 'attempt.failed' && event.tier === 'flex' && context.standard === 'failed',
    flexFailed: ({ event }) => event.type === 'attempt.failed' && event.tier === 'flex',
    fatal: ({ event }) => event.type === 'attempt.failed' && event.failure.kind === 'fatal',
    retriesLeft: ({ context }) => !!context.input.retry && context.retriesOnRoute < context.input.retry.count,
    // A provider that asks for a longer wait than the backoff's own ceiling and than the time left
    // to the deadline has, for this request, spent its route: the next route (or the caller's
    // error, carrying the provider's Retry-After) instead of an hour's sleep.
    waitAcceptable: ({ context, event }) => {
      const after = event.type === 'attempt.failed' ? event.failure.retryAfterMs : undefined;
      return after === undefined || after <= Math.max(MAX_DELAY_MS, context.input.deadlineAt - context.input.now());
    },
    routesLeft: ({ context }) => context.routeIndex + 1 < context.input.routes.length,
    flexStillRacing: ({ context }) => context.flex === 'racing',
    // The gateway's own capacity gate refused standard (no connection free for it: often held by
    // the organization's own waiting flex attempts, this one's among them) while flex still races.
    gateRefusedStandardFlexRacing: ({ context, event }) =>
      event.type === 'attempt.failed' && event.tier === 'standard' && event.failure.gatewayCode !== undefined && context.flex === 'racing',
  },
  delays: {
    backoff: ({ context }) =>
      backoffDelay(context.input.retry!, context.retriesOnRoute, context.failure?.retryAfterMs, context.input.random),
  },
  actions: {
    // The context is this request's own and never compared or persisted: actions update it in place.
    launchStandard: ({ context, self }) => launchStandard(context, self),
    // The first attempt: flex racing, the advisor asked when to hedge; or standard at once.
    begin: ({ context, self, system }) => {
      if (context.input.flex !== 'race') { launchStandard(context, self); return; }
      context.flex = 'racing';
      launchAttempt(context, self, 'flex');
      askHedge(context, self, system);
    },
    askHedge: ({ context, self, system }) => askHedge(context, self, system),
    // The hedge is no longer wanted (a tier committed, flex failed and standard runs, the request
    // ends): its timer is cancelled and the advisor hears it, so a launch it booked ahead is given
    // back now rather than when the request ends (lib/routing/launch-calendar.ts).
    cancelHedge: ({ context, self, system }) => {
      system.scheduler.cancel(self, 'hedge');
      context.input.hedge.done?.();
    },
    cancelRetry: cancel('retry'),
    scheduleRetry: raise({ type: 'retry' }, { id: 'retry', delay: 'backoff' }),
    flexFailed: ({ context, event }) => {
      context.flex = 'failed';
      context.attempts.flex = null;
      context.failure ??= (event as Extract<Ev, { type: 'attempt.failed' }>).failure;
    },
    recordFailure: ({ context, event }) => { context.failure = (event as Extract<Ev, { type: 'attempt.failed' }>).failure; },
    backOff: ({ context }) => {
      context.attempts.standard = null;
      context.standard = 'backoff';
      context.retriesOnRoute++;
    },
    // Counted when the retry runs, not when it is scheduled: a flex commit during the backoff
    // cancels it, and x-service-retries reports retries performed.
    countRetry: ({ context }) => { context.retries++; },
    nextRoute: ({ context }) => {
      if (context.flex === 'racing') context.flex = 'stopped';
      stopAttempt(context.attempts, 'flex');
      context.attempts.standard = null;
      context.standard = 'idle';
      context.routeIndex++;
      context.retriesOnRoute = 0;
      context.fallbacks++;
    },
    standardFailed: ({ context }) => { context.attempts.standard = null; context.standard = 'failed'; },
    // Flex gives its connection to standard: flex had until the latest point the deadline allows,
    // and waiting on it longer (its first-byte bound runs past the deadline) would miss the deadline.
    yieldFlex: ({ context }) => {
      context.flex = 'stopped';
      stopAttempt(context.attempts, 'flex');
      context.attempts.standard = null;
    },
    win: ({ context, event }) => {
      const e = event as Extract<Ev, { type: 'attempt.committed' }>;
      // The loser is aborted at once; the winner's handle stays, so stopping the request aborts it.
      stopAttempt(context.attempts, e.tier === 'flex' ? 'standard' : 'flex');
      context.reason = reasonAt(context, e.tier);
      context.winner = e.committed;
    },
    stopAll: ({ context }) => { stopAttempt(context.attempts, 'flex'); stopAttempt(context.attempts, 'standard'); },
  },
}).createMachine({
  id: 'request',
  context: ({ input }) => initialContext(input),
  initial: 'running',
  states: {
    running: {
      // Arrival: the first attempt (flex racing, or standard at once).
      entry: 'begin',
      on: {
        hedge: { guard: 'standardIdle', actions: 'askHedge' },
        retry: { actions: ['countRetry', 'launchStandard'] },
        'attempt.committed': [
          { guard: 'untimed', target: 'committed', actions: 'win' },   // no timer was ever set
          { target: 'committed', actions: ['win', 'cancelHedge', 'cancelRetry'] },
        ],
        'attempt.failed': [
          // the flex tier could not start: standard at once (waiting longer cannot help), unless it already runs or
          // has already failed with nothing left to try
          { guard: 'flexFailedNothingLeft', target: 'failed', actions: ['flexFailed', 'cancelHedge'] },
          { guard: and(['flexFailed', 'standardIdle']), actions: ['flexFailed', 'cancelHedge', 'launchStandard'] },
          { guard: 'flexFailed', actions: ['flexFailed', 'cancelHedge'] },
          { guard: 'fatal', target: 'failed', actions: ['recordFailure', 'stopAll', 'cancelHedge', 'cancelRetry'] },
          // standard refused a connection by the gateway while flex holds one: flex yields it (its
          // abort frees the slot at once) and standard goes again; refused again, the rules below
          { guard: 'gateRefusedStandardFlexRacing', actions: ['recordFailure', 'yieldFlex', 'launchStandard'] },
          // transient standard failure with retries left on this route: back off, then again
          { guard: and(['retriesLeft', 'waitAcceptable']), actions: ['recordFailure', 'backOff', 'scheduleRetry'] },
          // the route is spent: the next element of provider, standard tier
          { guard: 'routesLeft', actions: ['recordFailure', 'cancelHedge', 'nextRoute', 'launchStandard'] },
          // nothing left but a flex attempt still racing: let it try
          { guard: 'flexStillRacing', actions: ['recordFailure', 'cancelHedge', 'standardFailed'] },
          { target: 'failed', actions: ['recordFailure', 'stopAll', 'cancelHedge'] },
        ],
      },
    },
    committed: { type: 'final' },
    failed: { type: 'final' },
  },
});

/** The timer source xstate schedules delays on (its SimulatedClock in tests). */
export interface TimerClock { setTimeout(fn: (...args: any[]) => void, ms: number): any; clearTimeout(id: any): void }

export interface RunningRequest {
  /** Resolves when a tier committed or nothing is left to try (or the request was stopped). */
  outcome: Promise<Outcome>;
  /** Ends the request: stops every attempt (aborting upstream calls, the winner's too) and the machine. */
  stop(): void;
}

export function startRequest(input: MachineInput, clock: TimerClock = globalThis): RunningRequest {
  const run = new RequestRun(clock);
  run.start(input);
  return run;
}

type Snapshot = SnapshotFrom<typeof requestMachine>;
/** `running`, entered, as xstate resolves it. A snapshot is a plain object that transitions copy,
 *  never change: a request's first one is this with its own context. */
const ARRIVED: Snapshot = requestMachine.resolveState({ value: 'running', context: undefined as unknown as Ctx });
/** What an action is called with (xstate's ActionArgs, as far as the machine's actions read it). */
type ActionInfo = { context: Ctx; event: unknown; self: RequestRun; system: typeof SYSTEM };
/** `running`'s entry actions, as the machine declares them: what xstate's initial microstep runs
 *  on arrival, each a named action of setup(), called with the request's own context. */
const ON_ARRIVAL = requestMachine.states.running!.entry.map((action) => {
  const impl = typeof action === 'string' ? (requestMachine.implementations.actions as Record<string, unknown>)[action] : undefined;
  if (typeof impl !== 'function') throw new Error(`request machine: the entry action ${String(action)} of running is not named in setup()`);
  return impl as (info: ActionInfo, params: undefined) => void;
});
const INIT = Object.freeze({ type: 'xstate.init' });
type Scope = Parameters<typeof requestMachine.transition>[2];
const noop = (): void => {};
/** What a transition hands its actor to run: a custom action and its arguments. */
type ExecutableAction = { exec?: (info: unknown, params: unknown) => void; info: unknown; params: unknown };

/** The actor system xstate's transition algorithm asks for: delayed events only, each on the
 *  request's own clock (inspection is off). One object for every request. */
const SYSTEM = {
  scheduler: {
    schedule: (_source: RequestRun, target: RequestRun, event: Ev, delay: number, id: string) => target.schedule(event, delay, id),
    cancel: (source: RequestRun, id: string) => source.cancel(id),
  },
  _sendInspectionEvent: noop,
};

/** One request's run of the machine. xstate's own algorithm computes every transition
 *  (`requestMachine.transition`); this holds the snapshot, runs what a transition defers (delayed
 *  events and their cancellations), owns the timers and resolves the outcome at a final state. It
 *  stands in for createActor, whose actor, system, mailbox and listener maps cost a request more
 *  than its whole race (bench/README "the machine"): events here only ever come from timers,
 *  attempt promises and the responder, never from inside a transition, so there is nothing for a
 *  mailbox to order. */
class RequestRun implements RunningRequest {
  readonly outcome: Promise<Outcome>;
  private resolve!: (o: Outcome) => void;
  private snapshot!: Snapshot;
  private readonly deferred: (() => void)[] = [];
  private timers: Map<string, unknown> | undefined;   // made by the first timer (a race or a retry)
  private settledOnce = false;
  private stopped = false;

  constructor(private readonly clock: TimerClock) {
    this.outcome = new Promise<Outcome>((r) => { this.resolve = r; });
  }

  // The actor scope xstate's algorithm calls into is this run itself (its members below, read as
  // `scope.x` and called as `scope.x(…)`), so a request makes no scope object or closures for it.
  get self(): this { return this; }
  get id(): string { return 'request'; }
  get sessionId(): string { return ''; }
  get system(): typeof SYSTEM { return SYSTEM; }
  logger(): void {}
  stopChild(): void {}
  defer(fn: () => void): void { this.deferred.push(fn); }
  actionExecutor(action: ExecutableAction): void { action.exec?.(action.info, action.params); }

  private get scope(): Scope { return this as unknown as Scope; }

  get context(): Ctx { return this.snapshot.context; }

  /** Arrival: the snapshot xstate's initial transition would make, made once (ARRIVED) and given
   *  this request's context, then `running`'s entry actions, which launch the first attempt. */
  start(input: MachineInput): void {
    const context = initialContext(input);
    this.snapshot = { ...ARRIVED, context };
    try {
      for (const action of ON_ARRIVAL) action({ context, event: INIT, self: this, system: SYSTEM }, undefined);
    } catch (err) {
      this.fail(err);
    }
  }

  send(event: Ev): void {
    if (this.stopped || this.snapshot.status !== 'active') return;
    this.step(event);
  }

  /** Ends the request: stops every attempt (aborting upstream calls, the winner's too) and the machine. */
  stop(): void {
    // No-op once settled; a request stopped while its tiers were still trying (its caller gone,
    // or shutdown's drain ran out) settles with no winner and the reason `abandoned`.
    this.halt(this.snapshot?.status === 'active');
  }

  private halt(abandoned: boolean): void {
    this.stopped = true;
    const attempts = this.snapshot?.context.attempts;
    if (attempts) { stopAttempt(attempts, 'flex'); stopAttempt(attempts, 'standard'); }
    this.clearTimers();
    this.settle(abandoned);
  }

  schedule(event: Ev, delay: number, id: string): void {
    this.cancel(id);
    const timers = this.timers ??= new Map();
    timers.set(id, this.clock.setTimeout(() => { timers.delete(id); this.send(event); }, delay));
  }

  cancel(id: string): void {
    if (!this.timers?.has(id)) return;
    this.clock.clearTimeout(this.timers.get(id));
    this.timers.delete(id);
  }

  /** The transition on `event`, then what it deferred. */
  private step(event: Ev): void {
    try {
      this.snapshot = requestMachine.transition(this.snapshot, event, this.scope);
      if (this.snapshot.status === 'error') throw this.snapshot.error;
    } catch (err) {
      this.fail(err);
      return;
    }
    while (this.deferred.length) this.deferred.shift()!();
    if (this.snapshot.status !== 'active') { this.clearTimers(); this.settle(); }
  }

  /** A throwing guard or action (a bug, or a launch that threw) fails the request, not the process. */
  private fail(err: unknown): void {
    const ctx: Partial<Ctx> = this.snapshot?.context ?? {};
    ctx.failure ??= { kind: 'transient', status: 502, message: String((err as Error)?.message ?? err) };
    this.halt(false);
  }

  private clearTimers(): void {
    if (!this.timers) return;
    for (const t of this.timers.values()) this.clock.clearTimeout(t);
    this.timers.clear();
  }

  private settle(abandoned = false): void {
    if (this.settledOnce) return;
    this.settledOnce = true;
    this.context.input.hedge.done?.();
    const { winner, routeIndex, retries, fallbacks, failure } = this.context;
    // A race that ends with nothing served did not have flex serve it: its reason is not the
    // flex_committed it started from (the answer's header and the usage record carry it). One
    // stopped before anything served is `abandoned`, not a flex that failed.
    const reason = winner ? this.context.reason : abandoned ? 'abandoned'
      : this.context.input.flex !== 'race' ? this.context.reason : routeIndex > 0 ? 'fallback' : 'flex_unavailable';
    this.resolve({ winner, reason, routeIndex, retries, fallbacks, failure });
  }
}
