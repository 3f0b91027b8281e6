// The flex-policy bench (bench/flex-policy.ts) at a small n: the real request machine on a
// SimulatedClock under the learned policy. These tests assert behaviour, not the bench's figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WORLDS, drawRequests, runMachine, learnedPolicy, stats, targets, evaluateWorld, type World } from '../../bench/flex-policy.ts';

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

test('seeded: the same seed gives the same results, and targets are judged against the oracle', async () => {
  const a = await evaluateWorld(WORLDS[0]!, { n: 200, seed: 2 });
  const b = await evaluateWorld(WORLDS[0]!, { n: 200, seed: 2 });
  assert.deepEqual(b, a);
  const p = a.byBudget[0]!.policies;
  const t = targets(5_000, { ...p, learned: p.oracle });
  assert.ok(t.every((x) => x.holds), 'the oracle meets the oracle\'s targets');
  assert.equal(stats(drawRequests(10, 1), drawRequests(10, 1).map((d) => ({ tier: 'standard' as const, commitMs: d.budgetMs + 1 }))).deadlineMetPct, 0);
});
