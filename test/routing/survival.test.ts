// The decayed, censoring-aware time-to-event estimate behind the flex policy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DecayedSurvival, normalQuantile } from '../../lib/routing/survival.ts';

const close = (a: number, b: number, tol: number, what: string) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

test('a right-censored observation moves the estimate: aborted attempts are not forgotten', () => {
  const s = new DecayedSurvival(60_000);
  for (let i = 0; i < 10; i++) s.observe('event', 1_000, 0);
  close(s.eventBy(5_000), 1, 1e-9, 'only starts seen');
  // Ten attempts aborted at 3 s (standard won): they had not started by then.
  for (let i = 0; i < 10; i++) s.observe('censored', 3_000, 0);
  close(s.eventBy(5_000), 0.5, 1e-9, 'half were still waiting at 3 s');
  assert.equal(s.eventBetween(4_000, 5_000), undefined, 'nothing is known past the last observation');
  close(s.eventBetween(0, 2_000)!, 0.5, 1e-9, 'P(start by 2 s)');
});

test('an attempt aborted at once says nothing (a censoring counts only before its own time)', () => {
  const s = new DecayedSurvival(60_000);
  for (let i = 0; i < 4; i++) s.observe('event', 0, 0);
  for (let i = 0; i < 4; i++) s.observe('censored', 0, 0);
  close(s.eventBy(1_000), 1, 1e-9, 'starts at 0 stay certain');
});

test('refusals are a competing outcome: they lower the chance to start, not the start times', () => {
  const s = new DecayedSurvival(60_000);
  for (let i = 0; i < 6; i++) s.observe('event', 2_000, 0);
  for (let i = 0; i < 4; i++) s.observe('other', 100, 0);
  close(s.otherBy(Infinity), 0.4, 1e-9, 'refusal rate');
  close(s.eventBy(10_000), 0.6, 1e-9, 'chance to start');
  close(s.eventBetween(500, 10_000)!, 1, 1e-9, 'once past the refusals, flex starts');
});

test('it forgets: after ten half-lives, a congested past weighs ~1/1000 of a fresh observation', () => {
  const s = new DecayedSurvival(60_000);
  for (let i = 0; i < 10; i++) s.observe('censored', 10_000, 0);      // backed up: nothing started in 10 s
  for (let i = 0; i < 10; i++) s.observe('event', 20_000, 0);
  close(s.eventBy(5_000), 0, 1e-9, 'congested');
  s.observe('event', 100, 600_000);
  s.observe('event', 100, 600_000);
  assert.ok(s.eventBy(5_000) > 0.99, `recovered: ${s.eventBy(5_000)}`);
  close(s.weight(600_000), 2 + 20 / 1024, 1e-6, 'effective observations');
});

test('quantiles of a lognormal sample land near the truth (censoring above them does not bias them)', () => {
  const s = new DecayedSurvival(1e12);
  let seed = 7;
  const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  for (let i = 0; i < 4_000; i++) {
    const x = 600 * Math.exp(0.7 * normalQuantile(rand()));
    // Every second attempt is aborted at a random time (the other tier won); if that came first we only know "not by then".
    const abortAt = i % 2 ? 5_000 * rand() : Infinity;
    s.observe(x <= abortAt ? 'event' : 'censored', Math.min(x, abortAt), 0);
  }
  close(s.quantile(0.5)!, 600, 60, 'median');
  close(s.quantile(0.9)!, 600 * Math.exp(0.7 * 1.2816), 150, 'p90');
});

test('many attempts censored at the same points (every hedge aborts flex near deadline − lead) do not bias the estimate, ' +
  'nor make the last of them a start', () => {
  const s = new DecayedSurvival(1e12);
  let seed = 5;
  const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  const [median, sigma] = [40_000, 1.57];
  for (let i = 0; i < 30_000; i++) {
    const start = median * Math.exp(sigma * normalQuantile(rand()));
    const abortAt = [2_100, 27_100, 117_100][i % 3]!;   // the hedge of a 5, 30 or 120 s deadline won
    s.observe(start <= abortAt ? 'event' : 'censored', Math.min(start, abortAt), 0);
  }
  const truth = (ms: number) => 0.5 * (1 + erf(Math.log(ms / median) / sigma / Math.SQRT2));
  // Past the last censoring nothing is known, so the estimate stays where the data left it (not the
  // truth, but not a jump either: the attempts still waiting when the last ones were aborted did not start).
  for (const ms of [2_000, 25_000, 60_000, 110_000]) close(s.eventBy(ms), truth(ms), 0.02, `P(start by ${ms} ms)`);
  close(s.eventBy(120_000), truth(117_100), 0.02, 'P(start by 120 s), beyond the last abort at 117.1 s');
});

/** Abramowitz–Stegun 7.1.26 (|error| < 1.5e-7). */
function erf(x: number): number {
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return x >= 0 ? y : -y;
}
