// The life of one inference request before and around its commit point (design.md "Flex race =
// hedge"; style.md habits 4–6). The machine hears about five lifecycle events per attempt; bytes
// never pass through it. Attempts are child actors: stopping one aborts its upstream call, and
// stopping the machine (client gone) stops them all.
//
//   running ── attempt.committed ──► committed ── stream.end ──► done
//      │  flex on routes[0] at once; standard hedge raised at deadline − lead;
//      │  flex refusal → standard now; standard failure → retry after backoff, then the next route
//      └── no attempt left ──► failed
import { assign, createActor, enqueueActions, fromCallback, setup, type EventObject } from 'xstate';
import type { RouteName, Tier } from '../ir.ts';
import type { Failure } from '../providers/types.ts';
import { AttemptFailed, type Committed } from '../stream/attempt.ts';
import { backoffDelay, type RetryPolicy } from './backoff.ts';

export type FlexMode = 'race' | 'slots_full' | 'off';

export interface MachineInput {
  routes: RouteName[];
  flex: FlexMode;
  deadlineAt: number;                 // epoch ms: start_within from arrival
  lead: () => number;                 // estimate of standard's time to first event on routes[0]
  retry?: RetryPolicy;
  now: () => number;
  random: () => number;
  /** Starts one upstream attempt; resolves at its commit point, rejects with AttemptFailed. */
  launch: (route: RouteName, tier: Tier, signal: AbortSignal) => Promise<Committed>;
}

export interface Outcome {
  winner?: Committed;
  reason: string;                     // routing reason (README enumeration)
  routeIndex: number;
  retries: number;
  fallbacks: number;
  failure?: Failure;
}

interface Ctx {
  input: MachineInput;
  seq: number;
  routeIndex: number;
  retriesOnRoute: number;
  retries: number;
  fallbacks: number;
  flexId: string | null;
  stdId: string | null;
  stdLaunched: boolean;
  flexRefused: boolean;
  waitingRetry: boolean;
  reason: string;
  winner?: Committed;
  failure?: Failure;
}

type Ev =
  | { type: 'attempt.committed'; id: string; tier: Tier; committed: Committed }
  | { type: 'attempt.failed'; id: string; tier: Tier; failure: Failure }
  | { type: 'hedge' }
  | { type: 'retry' }
  | { type: 'stream.end' };

interface AttemptInput { route: RouteName; tier: Tier; id: string; launch: MachineInput['launch'] }

/** Given to AbortController.abort: a shared reason, so stopping an attempt allocates no error. */
const STOPPED = Object.freeze(new Error('attempt stopped'));

const attempt = fromCallback<EventObject, AttemptInput>(({ input, sendBack }) => {
  const ac = new AbortController();
  input.launch(input.route, input.tier, ac.signal).then(
    (committed) => sendBack({ type: 'attempt.committed', id: input.id, tier: input.tier, committed }),
    (err) => {
      if (ac.signal.aborted) return;
      const failure: Failure = err instanceof AttemptFailed ? err.failure : { kind: 'transient', status: 502, message: String(err?.message ?? err) };
      sendBack({ type: 'attempt.failed', id: input.id, tier: input.tier, failure });
    },
  );
  return () => ac.abort(STOPPED);
});

/** The timer source xstate schedules delays on (its SimulatedClock in tests). */
export interface TimerClock { setTimeout(fn: (...args: any[]) => void, ms: number): any; clearTimeout(id: any): void }

export const requestMachine = setup({
  types: { context: {} as Ctx, events: {} as Ev, input: {} as MachineInput },
  actors: { attempt },
  actions: {
    launch: enqueueActions(({ context, enqueue }, params: { tier: Tier }) => {
      const id = `attempt-${context.seq + 1}`;
      const route = context.input.routes[context.routeIndex]!;
      enqueue.spawnChild('attempt', { id, input: { route, tier: params.tier, id, launch: context.input.launch } });
      enqueue.assign(params.tier === 'flex'
        ? { seq: context.seq + 1, flexId: id }
        : { seq: context.seq + 1, stdId: id, stdLaunched: true });
    }),
    stopAll: enqueueActions(({ context, enqueue }) => {
      if (context.flexId) enqueue.stopChild(context.flexId);
      if (context.stdId) enqueue.stopChild(context.stdId);
      enqueue.cancel('hedge');
      enqueue.cancel('retry');
    }),
  },
}).createMachine({
  id: 'request',
  context: ({ input }) => ({
    input, seq: 0, routeIndex: 0, retriesOnRoute: 0, retries: 0, fallbacks: 0,
    flexId: null, stdId: null, stdLaunched: false, flexRefused: false, waitingRetry: false,
    reason: input.flex === 'race' ? 'flex_committed' : input.flex === 'slots_full' ? 'flex_slots_full' : 'standard_requested',
  }),
  initial: 'running',
  states: {
    running: {
      entry: enqueueActions(({ context, enqueue }) => {
        const { input } = context;
        if (input.flex === 'race') {
          enqueue({ type: 'launch', params: { tier: 'flex' } });
          const delay = Math.max(0, input.deadlineAt - input.lead() - input.now());
          enqueue.raise({ type: 'hedge' }, { id: 'hedge', delay });
        } else {
          enqueue({ type: 'launch', params: { tier: 'standard' } });
        }
      }),
      on: {
        hedge: {
          guard: ({ context }) => context.stdId === null && !context.waitingRetry && !context.stdLaunched,
          actions: { type: 'launch', params: { tier: 'standard' } },
        },
        retry: { actions: [assign({ waitingRetry: false }), { type: 'launch', params: { tier: 'standard' } }] },
        'attempt.committed': {
          target: 'committed',
          actions: enqueueActions(({ context, event, enqueue }) => {
            const other = event.tier === 'flex' ? context.stdId : context.flexId;
            if (other) enqueue.stopChild(other);
            enqueue.cancel('hedge');
            enqueue.cancel('retry');
            let reason = context.reason;
            if (context.routeIndex > 0) reason = 'fallback';
            else if (context.input.flex === 'race') {
              reason = event.tier === 'flex'
                ? (context.stdLaunched ? 'flex_won' : 'flex_committed')
                : (context.flexRefused ? 'flex_unavailable' : 'flex_lost_race');
            }
            enqueue.assign({ winner: event.committed, reason });
          }),
        },
        'attempt.failed': [
          { // the flex tier could not start: standard at once (design.md), unless it already runs
            guard: ({ event }) => event.tier === 'flex',
            actions: enqueueActions(({ context, enqueue }) => {
              enqueue.assign({ flexId: null, flexRefused: true });
              enqueue.cancel('hedge');
              if (context.stdId === null && !context.waitingRetry && !context.stdLaunched) enqueue({ type: 'launch', params: { tier: 'standard' } });
            }),
          },
          { guard: ({ event }) => event.failure.kind === 'fatal', target: 'failed', actions: [assign(({ event }) => ({ failure: event.failure })), 'stopAll'] },
          { // transient standard failure with retries left on this route: back off, then again
            guard: ({ context }) => !!context.input.retry && context.retriesOnRoute < context.input.retry.count,
            actions: enqueueActions(({ context, event, enqueue }) => {
              const n = context.retriesOnRoute + 1;
              const delay = backoffDelay(context.input.retry!, n, event.failure.retryAfterMs, context.input.random);
              enqueue.assign({ stdId: null, waitingRetry: true, retriesOnRoute: n, retries: context.retries + 1, failure: event.failure });
              enqueue.raise({ type: 'retry' }, { id: 'retry', delay });
            }),
          },
          { // the route is spent: the next element of provider, standard tier
            guard: ({ context }) => context.routeIndex + 1 < context.input.routes.length,
            actions: enqueueActions(({ context, event, enqueue }) => {
              if (context.flexId) enqueue.stopChild(context.flexId);
              enqueue.cancel('hedge');
              enqueue.assign({ stdId: null, flexId: null, routeIndex: context.routeIndex + 1, retriesOnRoute: 0, fallbacks: context.fallbacks + 1, failure: event.failure, stdLaunched: false });
              enqueue({ type: 'launch', params: { tier: 'standard' } });
            }),
          },
          { // nothing left but a flex attempt still racing: let it try
            guard: ({ context }) => context.flexId !== null,
            actions: assign(({ event }) => ({ stdId: null, failure: event.failure })),
          },
          { target: 'failed', actions: [assign(({ event }) => ({ failure: event.failure })), 'stopAll'] },
        ],
      },
    },
    committed: {
      on: { 'stream.end': 'done' },
    },
    done: { type: 'final' },
    failed: { type: 'final' },
  },
});

export interface RunningRequest {
  /** Resolves when a tier committed or nothing is left to try. */
  outcome: Promise<Outcome>;
  /** Ends the request: stops every attempt (aborting upstream calls) and the machine. */
  stop(): void;
}

/** Runs a request: through the machine when there is anything to decide (a flex race, retries, a
 *  fallback chain); a single standard attempt — a "now" request on one route without retry, the
 *  common case — needs no timers or transitions and runs as a plain promise with the same outcome. */
export function startRequest(input: MachineInput, clock?: TimerClock): RunningRequest {
  return input.flex !== 'race' && !input.retry && input.routes.length === 1 ? startSingle(input) : startMachine(input, clock);
}

function startSingle(input: MachineInput): RunningRequest {
  const ac = new AbortController();
  const reason = input.flex === 'slots_full' ? 'flex_slots_full' : 'standard_requested';
  const base = { reason, routeIndex: 0, retries: 0, fallbacks: 0 };
  const outcome = input.launch(input.routes[0]!, 'standard', ac.signal).then(
    (winner): Outcome => ({ ...base, winner }),
    (err): Outcome => ({ ...base, failure: err instanceof AttemptFailed ? err.failure : { kind: 'transient', status: 502, message: String(err?.message ?? err) } }),
  );
  return { outcome, stop: () => ac.abort(STOPPED) };
}

function startMachine(input: MachineInput, clock?: TimerClock): RunningRequest {
  const actor = createActor(requestMachine, { input, ...(clock ? { clock } : {}) });
  const outcome = new Promise<Outcome>((resolve) => {
    const settle = (): void => {
      const c = actor.getSnapshot().context;
      resolve({ winner: c.winner, reason: c.reason, routeIndex: c.routeIndex, retries: c.retries, fallbacks: c.fallbacks, failure: c.failure });
    };
    actor.subscribe({
      next: (snap) => { if (snap.value === 'committed' || snap.value === 'failed') settle(); },
      complete: settle,   // stopped (client gone) or final
      error: settle,
    });
  });
  actor.start();
  return { outcome, stop: () => actor.stop() };
}
