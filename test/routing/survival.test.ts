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

test('the survival estimate says how sure it is: few attempts still waiting, a wide error; many, a narrow one', () => {
  const sample = (n: number) => {
    const s = new DecayedSurvival(1e12);
    for (let i = 0; i < n; i++) s.observe('event', 1_000, 0);
    for (let i = 0; i < n; i++) s.observe('event', 20_000, 0);    // half still waiting at 10 s
    return s;
  };
  const few = sample(5), many = sample(500);
  close(few.survival(10_000), 0.5, 1e-9, 'same estimate');
  close(many.survival(10_000), 0.5, 1e-9, 'same estimate');
  close(many.survivalError(10_000, 0), Math.sqrt(0.25 / 1_000), 1e-4, 'binomial error of a half from 1,000');
  assert.ok(few.survivalError(10_000, 0) > 8 * many.survivalError(10_000, 0), 'a hundred times fewer: ten times wider');
  // Decay: the same data an hour of half-lives later weighs less, so the estimate is less sure.
  assert.ok(many.survivalError(10_000, 1e13) > many.survivalError(10_000, 0));
});
