// The flex race policy that learns (issue 9). Per route and model it keeps two online, forgetting
// estimates (survival.ts): flex's time to start (starts are events, refusals a competing outcome,
// attempts aborted because standard won are right-censored) and standard's time to first event
// (attempts aborted because flex won are censored too). From them, for one request:
//
//   • give up on waiting — launch standard at once (reason flex_unlikely) — when the chance that
//     flex starts before the deadline, given that it has not started yet, is below
//     `min_flex_chance` with confidence (its upper bound, over the past attempts that waited as
//     long); asked at arrival and again at every wake-up while waiting;
//   • otherwise hedge at the latest point that meets the miss budget ε: a deadline is missed only
//     when flex has not started by then AND standard, launched at deadline − L, takes longer than
//     L, so L is standard's (1 − ε / P(flex fails))-quantile. The likelier flex is, the later the
//     hedge, and the more flex share is kept.
//
// The machine asks `standardAt(now)` and sleeps on its own clock until the answer; the advisor
// answers with a wake-up halfway there, so the decision is renewed with fresher estimates while
// waiting (a few timers per request, not a poll).
import type { RouteName, Tier } from '../routes.ts';
import type { HedgeAdvisor } from '../machine/request-machine.ts';
import { STOPPED, type Attempt } from '../stream/attempt.ts';
import { DecayedSurvival, normalQuantile } from './survival.ts';
import { SLOT_MS, type LaunchCalendar } from './launch-calendar.ts';

export interface FlexPolicyConfig {
  /** Share of deadlines the policy plans to miss (standard's tail), default 0.001. */
  miss_budget: number;
  /** Below this chance of flex starting in time, standard is launched at once. */
  min_flex_chance: number;
  /** Forgetting: an observation's weight halves every this many ms. */
  flex_half_life_ms: number;
  standard_half_life_ms: number;
  /** Effective observations needed before an estimate is trusted. */
  min_observations: number;
  /** Giving up on flex needs the upper confidence bound (Wilson, this z; 1 ≈ 84 % one-sided, 0: the
   *  point estimate) of its chance below `min_flex_chance`: late in a long wait few past attempts
   *  were still waiting, and a chance estimated from a dozen of them is noise — acting on it threw
   *  away flex the oracle keeps. */
  confidence_z: number;
}

export const DEFAULT_FLEX_POLICY: FlexPolicyConfig = {
  miss_budget: 0.001, min_flex_chance: 0.05, flex_half_life_ms: 30_000, standard_half_life_ms: 600_000, min_observations: 5,
  confidence_z: 1,
};

export interface LeadBounds { initial_lead_ms: number; min_lead_ms: number; max_lead_ms: number }

/** However sure flex looks, the hedge covers at least standard's p99: the flex estimate lags (attempts
 *  still waiting are not in it yet), so a near-zero chance of failing is not trusted. */
const MAX_TAIL = 0.01;
const MIN_WAKE_MS = 1_000;
/** The hedge is planned for half the miss budget: the other half absorbs estimation error (the
 *  far tail of standard is extrapolated from its median and p90). */
const PLANNED_SHARE = 0.5;
const TAIL_OBSERVATIONS_FACTOR = 4;
const Z90 = normalQuantile(0.9);

/** Wilson's upper bound on a proportion `p` estimated from `n` (effective) observations. */
export function upperBound(p: number, n: number, z: number): number {
  const z2n = (z * z) / n;
  return (p + z2n / 2 + z * Math.sqrt((p * (1 - p)) / n + z2n / (4 * n))) / (1 + z2n);
}

interface Estimates { route: RouteName; model: string; flex: DecayedSurvival; standard: DecayedSurvival }

export class FlexScheduler {
  private readonly est = new Map<string, Estimates>();

  /** `calendar`: the hedges planned by this process, so hedges that fall on one instant are
   *  spread before it (launch-calendar.ts); without one, each keeps its own point. `advanced`
   *  hears each hedge the calendar launched before its point, and by how much (metrics). */
  constructor(
    readonly cfg: FlexPolicyConfig, private readonly bounds: LeadBounds, private readonly now: () => number,
    private readonly calendar?: LaunchCalendar,
    private readonly advanced?: (route: RouteName, model: string, ms: number) => void,
  ) {}

  /** The hedge decision for one request whose flex attempt starts at `arrivalAt`. */
  advisor(route: RouteName, model: string, arrivalAt: number, deadlineAt: number): HedgeAdvisor {
    const e = this.get(route, model);
    const budget = deadlineAt - arrivalAt;
    const calendar = this.calendar;
    let arrived = false;
    // The calendar slot this request's hedge is booked in, while it waits for it.
    let slot: number | undefined;
    const unbook = (): void => { if (slot !== undefined) { calendar!.release(slot); slot = undefined; } };
    return {
      done: unbook,
      standardAt: (now) => {
        unbook();
        if (now >= deadlineAt) return { at: now, flexUnlikely: false };
        const waited = now - arrivalAt;
        const known = e.flex.weight(now) >= this.cfg.min_observations;
        // The hedge point, planned from arrival: P(miss) = P(flex fails by the deadline, and was
        // not refused early — a refusal launches standard at once) × P(standard slower than L).
        const fails = known ? Math.max(0, 1 - e.flex.eventBy(budget) - e.flex.otherBy(budget / 2)) : 1;
        const tail = fails <= 0 ? MAX_TAIL : Math.min(MAX_TAIL, (PLANNED_SHARE * this.cfg.miss_budget) / fails);
        const hedgeAt = deadlineAt - this.lead(e, 1 - tail, now);
        // Flex's chance, only trusted when enough past attempts were still waiting at this point.
        // At arrival: of starting before the standard this hedge would launch could answer (a hedge
        // near arrival leaves flex no real race); while waiting: of starting before the deadline,
        // given that it has not started yet.
        const first = !arrived;
        arrived = true;
        const until = first ? Math.min(budget, hedgeAt - arrivalAt + this.lead(e, 0.5, now)) : budget;
        // The chance rests on the past attempts still waiting at this point, each for what it saw
        // of (waited, until]: one stopped inside it (standard won, the caller left) saw only the
        // part before it stopped. Counted whole, they locked flex out: after a bad spell every
        // request went to standard at once, its flex attempt was stopped within a second, and those
        // stops alone kept the chance "confidently" at zero after the queue had recovered.
        const atRisk = known ? e.flex.atRisk(waited, now) - e.flex.censoredUnseen(waited, until, now) : 0;
        if (atRisk >= this.cfg.min_observations) {
          const chance = e.flex.eventBetween(waited, until);
          const unlikely = chance !== undefined && upperBound(chance, atRisk, this.cfg.confidence_z) < this.cfg.min_flex_chance;
          if (unlikely) return { at: now, flexUnlikely: true };
        }
        if (hedgeAt <= now) return { at: now, flexUnlikely: false };
        let launchAt = hedgeAt;
        if (calendar) ({ slot, at: launchAt } = calendar.book(hedgeAt, now));
        if (launchAt <= now) {
          unbook();
          this.advanced?.(route, model, hedgeAt - now);
          return { at: now, flexUnlikely: false };
        }
        return { at: Math.min(launchAt, now + Math.max(MIN_WAKE_MS, (launchAt - now) / 2)), flexUnlikely: false };
      },
    };
  }

  /** Feeds the estimates from one attempt: its commit is an event; a flex failure a refusal; an
   *  attempt stopped from outside (the other tier won, the client left) is censored. */
  track(route: RouteName, model: string, tier: Tier, launchedAt: number, attempt: Attempt): Attempt {
    const e = this.get(route, model);
    const s = tier === 'flex' ? e.flex : e.standard;
    let stopped = false;
    const committed = attempt.committed.then(
      (c) => { s.observe('event', c.committedAt - launchedAt, this.now()); return c; },
      (err) => {
        const now = this.now();
        if (stopped || err === STOPPED) s.observe('censored', now - launchedAt, now);
        else if (tier === 'flex') s.observe('other', now - launchedAt, now);
        throw err;
      },
    );
    return { committed, abort: () => { stopped = true; attempt.abort(); } };
  }

  /** Standard's time-to-first-event quantile p, bounded: the larger of the empirical (censoring-
   *  aware) quantile and a lognormal fitted to the median and p90 (the far tail has few samples). */
  lead(e: Estimates, p: number, now: number): number {
    let raw = this.bounds.initial_lead_ms;
    const n = e.standard.weight(now);
    if (n >= this.cfg.min_observations) {
      const q50 = e.standard.quantile(0.5), q90 = e.standard.quantile(0.9);
      const fitted = q50 && q90 && q90 > q50 ? q50 * Math.exp((Math.log(q90 / q50) / Z90) * normalQuantile(p)) : undefined;
      // A tail known only from attempts stopped while still waiting (flex won, the caller left) has
      // no quantile: it is at least as long as they waited.
      const estimate = Math.max(e.standard.quantile(p) ?? e.standard.unreachedBy(p) ?? 0, fitted ?? 0);
      // A tail from a handful of samples is a guess: until there are a few dozen, never below the prior.
      raw = n >= TAIL_OBSERVATIONS_FACTOR * this.cfg.min_observations ? estimate || raw : Math.max(raw, estimate);
    }
    return Math.min(this.bounds.max_lead_ms, Math.max(this.bounds.min_lead_ms, Math.round(raw)));
  }

  /** The current estimates (GET /admin/v1/scheduler). */
  snapshot(budgetsMs: number[] = [5_000, 30_000, 120_000]): Array<Record<string, unknown>> {
    const now = this.now();
    const ms = (v: number | undefined): number | null => (v === undefined ? null : Math.round(v));
    const round = (v: number): number => Math.round(v * 10_000) / 10_000;
    return [...this.est.values()].map((e) => ({
      route: e.route,
      model: e.model,
      flex: {
        observations: round(e.flex.weight(now)),
        refusal_rate: round(e.flex.otherBy(Infinity)),
        start_ms: { p50: ms(e.flex.quantile(0.5)), p90: ms(e.flex.quantile(0.9)) },
        chance_to_start_within: Object.fromEntries(budgetsMs.map((b) => [`${b / 1000}s`, round(e.flex.eventBy(b))])),
      },
      standard: {
        observations: round(e.standard.weight(now)),
        first_event_ms: { p50: ms(e.standard.quantile(0.5)), p99: ms(e.standard.quantile(0.99)) },
        hedge_lead_ms: this.lead(e, 1 - this.cfg.miss_budget, now),
      },
    }));
  }

  /** The hedges booked ahead and what a slot holds (GET /admin/v1/scheduler); null without a calendar. */
  launches(): { planned: number; slot_ms: number; per_slot: number; loop_ms_per_request: number } | null {
    const c = this.calendar;
    // The estimate as it stands: reading it must not close the cost's measuring window.
    const ms = c?.cost.lastMs ?? c?.cost.ms();
    return c ? { planned: c.size, slot_ms: SLOT_MS, per_slot: c.room(ms), loop_ms_per_request: Math.round(ms! * 1000) / 1000 } : null;
  }

  private get(route: RouteName, model: string): Estimates {
    const k = route + '\0' + model;
    let e = this.est.get(k);
    if (!e) {
      e = {
        route, model,
        flex: new DecayedSurvival(this.cfg.flex_half_life_ms),
        standard: new DecayedSurvival(this.cfg.standard_half_life_ms),
      };
      this.est.set(k, e);
    }
    return e;
  }
}

/** Today's fixed-lead hedge (a lead estimate read at arrival): standard at deadline − lead. */
export function fixedLeadHedge(deadlineAt: number, lead: () => number): HedgeAdvisor {
  let at: number | undefined;
  return { standardAt: () => ({ at: (at ??= deadlineAt - lead()), flexUnlikely: false }) };
}
