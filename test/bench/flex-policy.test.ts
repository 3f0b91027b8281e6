// The flex-policy bench (bench/flex-policy.ts) at a small n: the real request machine on a
// SimulatedClock under the learned policy. These tests assert behaviour, not the bench's figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  WORLDS, drawRequests, runMachine, learnedPolicy, stats, targets, evaluateWorld, hedged, type Draw, type World,
} from '../../bench/flex-policy.ts';

/** A world of the bench's shape whose flex queue starts in about a second, backing up ×30 (median
 *  30 s) from minute 5 to 9 when `changing`, for the whole run when `congested`. */
const fast = (congestion: World['congestion']): World => ({ ...WORLDS[0]!, name: 'test', flexMedianMs: 1_000, flexSigma: 0.5, congestion });
const SHORT = 5_000;

async function run(w: World, n: number, seed: number) {
  const draws = drawRequests(n, seed, w).map((d) => ({ ...d, budgetMs: SHORT }));
  const served = await runMachine(draws, (c) => learnedPolicy(c));
  /** Share of requests arriving in [from, to) that went to standard at once (flex_unlikely, committed at standard's pace). */
  const atOnce = (from: number, to: number) => {
    const idx = draws.flatMap((d, i) => (d.arrivalMs >= from && d.arrivalMs < to ? [i] : []));
    return idx.filter((i) => served[i]!.reason === 'flex_unlikely').length / idx.length;
  };
  return { draws, served, atOnce };
}

test('a congested flex queue turns short deadlines to standard at once; a healthy one races them', async () => {
  const congested = await run(fast([{ fromMs: 0, toMs: Infinity, flexScale: 30 }]), 300, 3);
  const healthy = await run(fast(undefined), 300, 3);
  const late = (r: typeof healthy) => r.atOnce(r.draws[150]!.arrivalMs, Infinity);   // once the estimates have data
  assert.ok(late(congested) > 0.8, `congested: ${late(congested)} at once`);
  assert.ok(late(healthy) < 0.05, `healthy: ${late(healthy)} at once`);
  assert.ok(healthy.served.slice(150).filter((s) => s.tier === 'flex').length > 100, 'healthy: flex serves');
});

test('the changing world: short deadlines go standard at once while the queue is backed up, and race again after', async () => {
  const period = { fromMs: 300_000, toMs: 540_000, flexScale: 30 };
  const r = await run(fast([period]), 2_000, 5);
  const before = r.atOnce(60_000, period.fromMs), during = r.atOnce(period.fromMs + 60_000, period.toMs), after = r.atOnce(period.toMs + 180_000, Infinity);
  assert.ok(during > 0.8, `backed up: ${during}`);
  assert.ok(before < 0.05 && after < 0.05, `healthy before ${before} and after ${after}`);
});

test('seeded: the same seed gives the same results; a different seed different draws', async () => {
  const a = await evaluateWorld(WORLDS[0]!, { n: 200, seed: 2 });
  const b = await evaluateWorld(WORLDS[0]!, { n: 200, seed: 2 });
  assert.deepEqual(b, a);
  assert.notDeepEqual(drawRequests(50, 3, WORLDS[0]!), drawRequests(50, 2, WORLDS[0]!));
});

test('targets: each one fails when the learned policy misses it against the oracle, and holds at the line', () => {
  const oracle = { requests: 100, deadlineMetPct: 100, flexSharePct: 80, meanCostMicroUsd: 1_000, p50CommitMs: 2_000, p99CommitMs: 5_000, reasons: {} };
  const judge = (budgetMs: number, learned: Partial<typeof oracle>) => Object.fromEntries(
    targets(budgetMs, { ...oracle, ...learned }, oracle).map((t) => [t.name.split(' ')[0], t.holds]));
  const LONG = 60_000;
  assert.deepEqual(judge(LONG, {}), { deadline: true, flex: true, cost: true, p50: true });
  assert.deepEqual(judge(LONG, { deadlineMetPct: 99.8 }), { deadline: false, flex: true, cost: true, p50: true });
  assert.deepEqual(judge(LONG, { flexSharePct: 79 }), { deadline: true, flex: false, cost: true, p50: true });
  assert.deepEqual(judge(LONG, { meanCostMicroUsd: 1_011 }), { deadline: true, flex: true, cost: false, p50: true });
  assert.deepEqual(judge(LONG, { meanCostMicroUsd: 1_010 }), { deadline: true, flex: true, cost: true, p50: true });
  assert.deepEqual(judge(LONG, { p50CommitMs: 3_001 }), { deadline: true, flex: true, cost: true, p50: false });
  // Short deadlines: looser floors (99.5 %, 80 % of the oracle's flex share), no cost target.
  assert.deepEqual(judge(SHORT, { deadlineMetPct: 99.5, flexSharePct: 64, meanCostMicroUsd: 5_000 }), { deadline: true, flex: true, p50: true });
  assert.deepEqual(judge(SHORT, { deadlineMetPct: 99.4, flexSharePct: 63 }), { deadline: false, flex: false, p50: true });
});

test('stats: deadline met, flex share and mean cost counted from what was served', () => {
  const draws = drawRequests(4, 1);
  const served = draws.map((d, i) => ({ tier: i < 3 ? 'flex' as const : 'standard' as const, commitMs: i === 0 ? d.budgetMs + 1 : d.budgetMs }));
  const st = stats(draws, served);
  assert.equal(st.requests, 4);
  assert.equal(st.deadlineMetPct, 75);
  assert.equal(st.flexSharePct, 75);
  assert.equal(stats(draws, draws.map((d) => ({ tier: 'standard' as const, commitMs: d.budgetMs + 1 }))).deadlineMetPct, 0);
  const allStandard = stats(draws, draws.map((d) => ({ tier: 'standard' as const, commitMs: 0 })));
  assert.ok(st.meanCostMicroUsd < allStandard.meanCostMicroUsd, 'flex is cheaper than standard');
});

test('hedged (the ceiling\'s policy): flex wins if it starts before standard\'s first event, even after the hedge; ' +
  'a refusal launches standard at once', () => {
  const d: Draw = { arrivalMs: 0, budgetMs: 30_000, flexRefused: false, refusalDelayMs: 100, flexDelayMs: 10_000, stdTtfeMs: 2_000 };
  assert.deepEqual(hedged(d, 20_000), { tier: 'flex', commitMs: 10_000 }, 'started before the hedge');
  assert.deepEqual(hedged(d, 9_000), { tier: 'flex', commitMs: 10_000 }, 'started while standard was still waiting for its first event');
  assert.deepEqual(hedged(d, 7_000), { tier: 'standard', commitMs: 9_000 }, 'standard answered first');
  assert.deepEqual(hedged({ ...d, flexRefused: true }, 20_000), { tier: 'standard', commitMs: 2_100 }, 'refused: standard at once');
});

test('the hindsight ceiling holds the deadline target when some (q, h) does, and still races flex', async () => {
  const r = await evaluateWorld(WORLDS[0]!, { n: 600, seed: 4 });
  for (const b of r.byBudget) {
    const c = b.policies.hindsight;
    // q = 1 (all standard at once) meets it in the healthy world
    assert.equal(b.ceiling[0]!.holds, true, `${b.budgetMs}: ${c.deadlineMetPct}`);
    assert.ok(c.flexSharePct > 0, `${b.budgetMs}: the ceiling races flex`);
  }
});
