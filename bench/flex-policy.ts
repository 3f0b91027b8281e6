// The flex-race policy, measured (design.md "Flex race = hedge, not wait-then-switch"): deadline met,
// flex share and cost of the gateway's hedge against the naive policy (flex, wait the whole budget,
// then standard) and the oracle (knows every draw in advance), plus all-standard for the price.
//
// A seeded discrete-event run on xstate's SimulatedClock, no real sleeping. Every request draws once
// (arrival, start_within budget, flex refusal or flex start delay, standard time to first event) and
// every policy sees the same draws. The hedge is the REAL request machine (`startRequest`) with fake
// attempts that commit after their drawn delay on the simulated clock, and its lead comes from a real
// `LeadEstimator` (gateway defaults) fed like the pipeline feeds it: the launch→commit time of every
// standard attempt that commits. Aborted attempts are assumed to cost nothing (they never started).
//
//   npx tsx bench/flex-policy.ts          (FLEX_POLICY_N=2000, FLEX_POLICY_SEED=1 by default)
import { SimulatedClock } from 'xstate';
import { startRequest } from '../lib/machine/request-machine.ts';
import { AttemptFailed, type Attempt, type Committed } from '../lib/stream/attempt.ts';
import { LeadEstimator } from '../lib/routing/lead.ts';
import { fixedLeadHedge } from '../lib/routing/flex-policy.ts';
import { loadConfig } from '../lib/config.ts';
import { DEFAULT_MODELS, costOf } from '../lib/catalog/catalog.ts';
import type { IRUsage, RouteName, Tier } from '../lib/ir.ts';
import { isMain } from './processes.ts';

// ---------- the world ----------

export const MODEL = 'gpt-5.4';
const ROUTE: RouteName = 'vendor_a';
export const BUDGETS_MS = [5_000, 30_000, 120_000] as const;
export const PARAMS = {
  meanInterArrivalMs: 500,              // Poisson arrivals: requests overlap, the estimator learns in commit order
  flexRefusalProbability: 0.10,         // the flex tier answers 429 (capacity) …
  flexRefusalDelayMs: [50, 300],        // … after uniform [50, 300) ms
  flexMedianMs: 8_000, flexSigma: 1.57, // lognormal flex start: p90 ≈ 60 s, p99 ≈ 5 min
  flexMaxMs: 600_000,
  stdMedianMs: 600, stdSigma: Math.log(5) / 2.3263, // lognormal standard time to first event: p99 ≈ 3 s
  inputTokens: 500, outputTokens: 300,
} as const;

export interface Draw {
  arrivalMs: number;
  budgetMs: number;
  flexRefused: boolean;
  refusalDelayMs: number;
  flexDelayMs: number;   // when flex would start, had it not been refused
  stdTtfeMs: number;     // standard's time to first event, whenever it is launched
}

/** mulberry32: small, fast, seeded. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(rand: () => number): number {
  const u = 1 - rand(); // (0, 1]
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

/** Every request draws the same six numbers in the same order, whatever it ends up using. */
export function drawRequests(n: number, seed: number): Draw[] {
  const rand = prng(seed);
  const out: Draw[] = [];
  let t = 0;
  for (let i = 0; i < n; i++) {
    t += Math.max(1, Math.round(-Math.log(1 - rand()) * PARAMS.meanInterArrivalMs));
    const budgetMs = BUDGETS_MS[Math.floor(rand() * BUDGETS_MS.length)]!;
    const flexRefused = rand() < PARAMS.flexRefusalProbability;
    const [lo, hi] = PARAMS.flexRefusalDelayMs;
    const refusalDelayMs = Math.round(lo + rand() * (hi - lo));
    const flexDelayMs = Math.min(PARAMS.flexMaxMs, Math.max(1, Math.round(PARAMS.flexMedianMs * Math.exp(PARAMS.flexSigma * normal(rand)))));
    const stdTtfeMs = Math.max(1, Math.round(PARAMS.stdMedianMs * Math.exp(PARAMS.stdSigma * normal(rand))));
    out.push({ arrivalMs: t, budgetMs, flexRefused, refusalDelayMs, flexDelayMs, stdTtfeMs });
  }
  return out;
}

// ---------- money ----------

const entry = DEFAULT_MODELS.find((m) => m.id === MODEL)!;
const usage: IRUsage = { inputTokens: PARAMS.inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: PARAMS.outputTokens, reasoningTokens: 0 };
export const COST_MICRO_USD: Record<Tier, number> = {
  flex: costOf(entry.prices.flex!, usage),          // ⌈500 × 1.25⌉ + ⌈300 × 7.5⌉ = 2,875
  standard: costOf(entry.prices.standard, usage),   // ⌈500 × 2.5⌉ + ⌈300 × 15⌉  = 5,750
};

// ---------- policies ----------

export type PolicyName = 'hedge' | 'naive' | 'oracle' | 'all-standard';
export const POLICIES: readonly PolicyName[] = ['hedge', 'naive', 'oracle', 'all-standard'];

/** One request under one policy: which tier committed and when, from arrival. */
export interface Served { tier: Tier; commitMs: number }

function naive(d: Draw): Served {
  if (d.flexRefused) return { tier: 'standard', commitMs: d.refusalDelayMs + d.stdTtfeMs };
  if (d.flexDelayMs <= d.budgetMs) return { tier: 'flex', commitMs: d.flexDelayMs };
  return { tier: 'standard', commitMs: d.budgetMs + d.stdTtfeMs }; // switch at the deadline, flex dropped
}

function oracle(d: Draw): Served {
  if (!d.flexRefused && d.flexDelayMs <= d.budgetMs) return { tier: 'flex', commitMs: d.flexDelayMs };
  return { tier: 'standard', commitMs: d.stdTtfeMs };
}

const allStandard = (d: Draw): Served => ({ tier: 'standard', commitMs: d.stdTtfeMs });

/** A SimulatedClock that also says when its next timer is due, so the run can step event by event
 *  and let promise reactions settle between two timers (SimulatedClock.set fires all due at once). */
class SteppingClock extends SimulatedClock {
  private readonly due = new Map<number, number>();
  override setTimeout(fn: (...args: any[]) => void, ms: number): number {
    const id: number = super.setTimeout((...args: any[]) => { this.due.delete(id); fn(...args); }, ms);
    this.due.set(id, this.now() + ms);
    return id;
  }
  override clearTimeout(id: number): void {
    this.due.delete(id);
    super.clearTimeout(id);
  }
  nextDue(): number {
    let min = Infinity;
    for (const t of this.due.values()) if (t < min) min = t;
    return min;
  }
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

export interface HedgeServed extends Served {
  reason: string;
  leadMs: number;          // the lead the machine read at arrival
  hedged: boolean;         // a standard attempt was launched
}

export interface HedgeRun {
  served: HedgeServed[];
  /** Standard launch→commit times the estimator was fed (only attempts that committed). */
  observedStdMs: number[];
  finalLeadMs: number;
}

/** The gateway's policy: the real request machine, all requests on one simulated clock.
 *  `leadScale` ≠ 1 is a what-if only (the gateway uses the estimator's lead as is). */
export async function runHedge(draws: Draw[], leadScale = 1): Promise<HedgeRun> {
  const clock = new SteppingClock();
  const hedge = loadConfig(undefined).hedge;
  const lead = new LeadEstimator(hedge);
  const served: HedgeServed[] = new Array(draws.length);
  const observedStdMs: number[] = [];
  const rand = prng(0x5eed);
  let settled = 0;

  const begin = (i: number): void => {
    const d = draws[i]!;
    const arrival = clock.now();
    let hedged = false;
    let leadMs = NaN;
    const launch = (route: RouteName, tier: Tier): Attempt => {
      let abort!: () => void;
      const committed = new Promise<Committed>((resolve, reject) => {
        if (tier === 'standard') hedged = true;
        const launchedAt = clock.now();
        const refuse = tier === 'flex' && d.flexRefused;
        const delay = tier === 'flex' ? (refuse ? d.refusalDelayMs : d.flexDelayMs) : d.stdTtfeMs;
        const timer = clock.setTimeout(() => {
          if (refuse) return reject(new AttemptFailed({ kind: 'capacity', status: 429, message: 'flex capacity unavailable' }));
          if (tier === 'standard') { // as pipeline.launchAttempt does on a streamed standard commit
            lead.observe(route, MODEL, clock.now() - launchedAt);
            observedStdMs.push(clock.now() - launchedAt);
          }
          resolve({ route, tier, committedAt: clock.now() } as unknown as Committed);
        }, delay);
        abort = () => { clock.clearTimeout(timer); reject(new Error('aborted')); };
      });
      return { committed, abort };
    };
    const run = startRequest({
      routes: [ROUTE], flex: 'race', deadlineAt: arrival + d.budgetMs,
      hedge: fixedLeadHedge(arrival + d.budgetMs, () => (leadMs = Math.round(leadScale * lead.lead(ROUTE, MODEL)))),
      now: () => clock.now(), random: rand, launch,
    }, clock);
    run.outcome.then((o) => {
      if (!o.winner) throw new Error(`request ${i} did not commit: ${o.failure?.message ?? o.reason}`);
      served[i] = { tier: o.winner.tier, commitMs: o.winner.committedAt - arrival, reason: o.reason, leadMs, hedged };
      settled++;
      run.stop(); // the stream ends: nothing of this request stays on the clock
    });
  };

  let next = 0;
  for (;;) {
    const arrival = next < draws.length ? draws[next]!.arrivalMs : Infinity;
    const due = clock.nextDue();
    if (arrival === Infinity && due === Infinity) break;
    if (arrival <= due) { clock.set(arrival); begin(next++); } else clock.set(due);
    await settle();
  }
  if (settled !== draws.length) throw new Error(`${draws.length - settled} requests never settled`);
  return { served, observedStdMs, finalLeadMs: lead.lead(ROUTE, MODEL) };
}

// ---------- statistics ----------

export interface PolicyStats {
  requests: number;
  deadlineMetPct: number;
  flexSharePct: number;
  meanCostMicroUsd: number;
  costVsStandard: number;   // mean cost / all-standard mean cost
  p50CommitMs: number;
  p99CommitMs: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

function stats(draws: Draw[], served: Served[]): PolicyStats {
  const n = served.length;
  let met = 0, flex = 0, cost = 0;
  served.forEach((s, i) => {
    if (s.commitMs <= draws[i]!.budgetMs) met++;
    if (s.tier === 'flex') flex++;
    cost += COST_MICRO_USD[s.tier];
  });
  const times = served.map((s) => s.commitMs).sort((a, b) => a - b);
  const meanCost = n ? cost / n : NaN;
  return {
    requests: n, deadlineMetPct: (100 * met) / n, flexSharePct: (100 * flex) / n,
    meanCostMicroUsd: meanCost, costVsStandard: meanCost / COST_MICRO_USD.standard,
    p50CommitMs: percentile(times, 0.5), p99CommitMs: percentile(times, 0.99),
  };
}

export interface EvaluationResult {
  n: number;
  seed: number;
  overall: Record<PolicyName, PolicyStats>;
  byBudget: Array<{ budgetMs: number; policies: Record<PolicyName, PolicyStats> }>;
  hedge: {
    reasons: Record<string, number>;
    hedgesLaunched: number;
    hedgesWasted: number;          // standard launched, flex still won (standard aborted)
    misses: { standardTooSlow: number; refusedThenSlow: number; unexplained: number };
    meanLeadMs: number;
    finalLeadMs: number;
    observedStdMeanMs: number;     // what the estimator saw (censored: slow hedges lose to flex)
    drawnStdMeanMs: number;        // the true mean of the draws
    leadCoveragePct: number;       // share of hedged requests whose standard TTFE ≤ the lead
  };
}

export async function evaluatePolicies(opts: { n: number; seed: number }): Promise<EvaluationResult> {
  const draws = drawRequests(opts.n, opts.seed);
  const h = await runHedge(draws);
  const served: Record<PolicyName, Served[]> = {
    hedge: h.served, naive: draws.map(naive), oracle: draws.map(oracle), 'all-standard': draws.map(allStandard),
  };
  const table = (idx: number[]): Record<PolicyName, PolicyStats> => Object.fromEntries(POLICIES.map((p) => [
    p, stats(idx.map((i) => draws[i]!), idx.map((i) => served[p][i]!)),
  ])) as Record<PolicyName, PolicyStats>;
  const all = draws.map((_, i) => i);

  const reasons: Record<string, number> = {};
  let hedgesLaunched = 0, hedgesWasted = 0, standardTooSlow = 0, refusedThenSlow = 0, unexplained = 0, covered = 0, leadSum = 0;
  h.served.forEach((s, i) => {
    const d = draws[i]!;
    reasons[s.reason] = (reasons[s.reason] ?? 0) + 1;
    leadSum += s.leadMs;
    if (s.reason === 'flex_lost_race' || s.reason === 'flex_won') {
      hedgesLaunched++;
      if (d.stdTtfeMs <= s.leadMs) covered++;
    }
    if (s.reason === 'flex_won') hedgesWasted++;
    if (s.commitMs > d.budgetMs) {
      // The design's only ways to miss: the hedge, launched at deadline − lead (or at once when the
      // budget is shorter than the lead), took longer than the time left; or flex refused and
      // standard, launched right then, took longer than what was left of the budget.
      if (d.flexRefused) { refusedThenSlow++; if (d.refusalDelayMs + d.stdTtfeMs <= d.budgetMs) unexplained++; }
      else { standardTooSlow++; if (d.stdTtfeMs <= Math.min(s.leadMs, d.budgetMs)) unexplained++; }
    }
  });
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

  return {
    n: opts.n, seed: opts.seed,
    overall: table(all),
    byBudget: BUDGETS_MS.map((b) => ({ budgetMs: b, policies: table(all.filter((i) => draws[i]!.budgetMs === b)) })),
    hedge: {
      reasons, hedgesLaunched, hedgesWasted, misses: { standardTooSlow, refusedThenSlow, unexplained },
      meanLeadMs: leadSum / draws.length, finalLeadMs: h.finalLeadMs,
      observedStdMeanMs: mean(h.observedStdMs), drawnStdMeanMs: mean(draws.map((d) => d.stdTtfeMs)),
      leadCoveragePct: hedgesLaunched ? (100 * covered) / hedgesLaunched : NaN,
    },
  };
}

// ---------- printing ----------

const COLUMNS = ['policy', 'requests', 'deadline met %', 'flex share %', 'mean cost µUSD', 'cost vs std', 'p50 commit ms', 'p99 commit ms'];

function printTable(title: string, policies: Record<PolicyName, PolicyStats>): void {
  const cells = POLICIES.map((p) => {
    const s = policies[p];
    return [p, String(s.requests), s.deadlineMetPct.toFixed(1), s.flexSharePct.toFixed(1), s.meanCostMicroUsd.toFixed(0),
      s.costVsStandard.toFixed(3), s.p50CommitMs.toFixed(0), s.p99CommitMs.toFixed(0)];
  });
  const widths = COLUMNS.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const line = (row: string[]): string => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\n### ${title}`);
  console.log(line(COLUMNS));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of cells) console.log(line(row));
}

export function printEvaluation(r: EvaluationResult, elapsedMs?: number): void {
  console.log(`## flex-policy — hedge (real request machine) vs naive vs oracle, ${MODEL}, n=${r.n}, seed=${r.seed}`
    + (elapsedMs === undefined ? '' : `, ${elapsedMs.toFixed(0)} ms wall`));
  console.log(`draws: budget ∈ {${BUDGETS_MS.map((b) => `${b / 1000} s`).join(', ')}}; flex refusal ${PARAMS.flexRefusalProbability * 100}%`
    + `; flex start lognormal median ${PARAMS.flexMedianMs / 1000} s σ ${PARAMS.flexSigma}; standard TTFE lognormal median ${PARAMS.stdMedianMs} ms, p99 ≈ 3 s`);
  console.log(`cost per request: flex ${COST_MICRO_USD.flex} µUSD, standard ${COST_MICRO_USD.standard} µUSD (${PARAMS.inputTokens} in / ${PARAMS.outputTokens} out)`);
  printTable('all requests', r.overall);
  for (const b of r.byBudget) printTable(`start_within ${b.budgetMs / 1000} s`, b.policies);
  const h = r.hedge;
  console.log('\n### hedge internals');
  console.log(`reasons: ${Object.entries(h.reasons).sort().map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log(`standard hedges launched ${h.hedgesLaunched}, of which flex still won (standard aborted) ${h.hedgesWasted}`);
  console.log(`deadline misses: standard hedge slower than the time left ${h.misses.standardTooSlow}, flex refused then standard too slow ${h.misses.refusedThenSlow}`
    + `, neither (a policy bug) ${h.misses.unexplained}`);
  console.log(`lead: mean ${h.meanLeadMs.toFixed(0)} ms, final ${h.finalLeadMs} ms; hedged requests whose standard TTFE ≤ lead ${h.leadCoveragePct.toFixed(1)}%`);
  console.log(`standard TTFE: mean fed to the estimator ${h.observedStdMeanMs.toFixed(0)} ms vs mean of all draws ${h.drawnStdMeanMs.toFixed(0)} ms`);
}

if (isMain(import.meta.url)) {
  const n = Number(process.env.FLEX_POLICY_N ?? 2000);
  const seed = Number(process.env.FLEX_POLICY_SEED ?? 1);
  const t0 = performance.now();
  const r = await evaluatePolicies({ n, seed });
  printEvaluation(r, performance.now() - t0);
  // What-if: a longer lead than the estimator's (mean + 4 × deviation), same draws (not what the gateway runs).
  console.log('\n### what-if: hedge with a longer lead (same draws; the gateway runs ×1)');
  const draws = drawRequests(n, seed);
  for (const scale of [1, 1.5, 2]) {
    const h = await runHedge(draws, scale);
    const s = stats(draws, h.served);
    console.log(`lead × ${scale.toFixed(1)}: deadline met ${s.deadlineMetPct.toFixed(1)}%`
      + `, flex share ${s.flexSharePct.toFixed(1)}%, cost vs std ${s.costVsStandard.toFixed(3)}`);
  }
}
