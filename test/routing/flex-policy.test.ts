// The flex policy's decisions from what it has learned: standard at once when flex is unlikely,
// else a hedge at the latest point the miss budget allows, renewed at wake-ups.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlexScheduler, DEFAULT_FLEX_POLICY } from '../../lib/routing/flex-policy.ts';
import { AttemptFailed, STOPPED, type Committed } from '../../lib/stream/attempt.ts';
import { normalQuantile } from '../../lib/routing/survival.ts';

const BOUNDS = { initial_lead_ms: 2_000, min_lead_ms: 200, max_lead_ms: 60_000 };

function scheduler() {
  let now = 1_000_000;
  const s = new FlexScheduler(DEFAULT_FLEX_POLICY, BOUNDS, () => now);
  return { s, at: (t: number) => { now = t; }, now: () => now };
}

/** Feeds one attempt, launched `ms` before the scheduler's now, through track(): it started,
 *  was refused, or was aborted (the other tier won) at now. */
async function attempt(s: FlexScheduler, now: number, tier: 'flex' | 'standard', outcome: 'start' | 'refuse' | 'abort', ms: number) {
  const launchedAt = now - ms;
  let settle!: (c: Committed) => void, fail!: (e: unknown) => void;
  const tracked = s.track('vendor_a', 'gpt-5.4', tier, launchedAt, {
    committed: new Promise<Committed>((r, j) => { settle = r; fail = j; }),
    abort: () => fail(STOPPED),
  });
  if (outcome === 'start') settle({ committedAt: now } as Committed);
  else if (outcome === 'refuse') fail(new AttemptFailed({ kind: 'capacity', status: 429, message: 'x' }));
  else tracked.abort();
  await tracked.committed.catch(() => undefined);
}

test('no data yet: race, hedge at deadline − the initial lead (with a wake-up on the way)', () => {
  const { s, now } = scheduler();
  const a = s.advisor('vendor_a', 'gpt-5.4', now(), now() + 30_000);
  const d = a.standardAt(now());
  assert.equal(d.flexUnlikely, false);
  assert.ok(d.at > now() && d.at < now() + 28_000, 'a wake-up before the hedge point');
  assert.deepEqual(a.standardAt(now() + 27_500), { at: now() + 28_000, flexUnlikely: false });
  assert.deepEqual(a.standardAt(now() + 28_000), { at: now() + 28_000, flexUnlikely: false }, 'at the hedge point: launch');
});

test('a congested flex queue turns short deadlines to standard at once; long ones still race', async () => {
  const { s, now } = scheduler();
  const t = now();
  for (let i = 0; i < 30; i++) { await attempt(s, now(), 'standard', 'start', 500 + (i % 5) * 100); }
  // The queue backs up: flex attempts aborted at 4 s (standard won) or started after ~60 s.
  for (let i = 0; i < 20; i++) { await attempt(s, now(), 'flex', 'abort', 4_000); }
  for (let i = 0; i < 10; i++) { await attempt(s, now(), 'flex', 'start', 60_000); }
  const short = s.advisor('vendor_a', 'gpt-5.4', t, t + 5_000).standardAt(t);
  assert.deepEqual(short, { at: t, flexUnlikely: true });
  const long = s.advisor('vendor_a', 'gpt-5.4', t, t + 120_000).standardAt(t);
  assert.equal(long.flexUnlikely, false);
  assert.ok(long.at > t);
});

test('while waiting, a request gives up on flex once its chance from there falls below the threshold', async () => {
  const { s, now } = scheduler();
  const t = now();
  for (let i = 0; i < 30; i++) { await attempt(s, now(), 'standard', 'start', 600); }
  // Flex starts within 2 s or not at all in 60 s.
  for (let i = 0; i < 20; i++) { await attempt(s, now(), 'flex', 'start', 1_000 + 50 * i); }
  for (let i = 0; i < 40; i++) { await attempt(s, now(), 'flex', 'abort', 60_000); }
  const a = s.advisor('vendor_a', 'gpt-5.4', t, t + 30_000);
  assert.equal(a.standardAt(t).flexUnlikely, false, 'at arrival, a 33 % chance: race');
  assert.deepEqual(a.standardAt(t + 5_000), { at: t + 5_000, flexUnlikely: true }, 'not started by 5 s: it will not');
});

test('giving up needs evidence: a chance of 0 from a few attempts still waiting is not trusted, from many it is', async () => {
  const decide = async (stillWaiting: number) => {
    const { s, now } = scheduler();
    const t = now();
    for (let i = 0; i < 30; i++) { await attempt(s, now(), 'standard', 'start', 600); }
    for (let i = 0; i < 40; i++) { await attempt(s, now(), 'flex', 'start', 1_000 + 50 * i); }
    // None of the attempts still waiting at 5 s ever started (all seen waiting to 60 s).
    for (let i = 0; i < stillWaiting; i++) { await attempt(s, now(), 'flex', 'abort', 60_000); }
    const a = s.advisor('vendor_a', 'gpt-5.4', t, t + 30_000);
    a.standardAt(t);
    return a.standardAt(t + 5_000).flexUnlikely;
  };
  assert.equal(await decide(8), false, '8 attempts: 0 of 8 could still be a 1-in-10 chance');
  assert.equal(await decide(60), true, '60 attempts: it will not start');
});

test('the hedge lead tracks a known lognormal\'s p99.9 from its samples, censored ones included', async () => {
  const { s, now } = scheduler();
  let seed = 11;
  const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  const [median, sigma] = [600, 0.9];
  for (let i = 0; i < 3_000; i++) {
    const x = median * Math.exp(sigma * normalQuantile(rand()));
    // One in four raced flex and lost to it at a random time: right-censored there.
    const abortAt = i % 4 === 0 ? 3_000 * rand() : Infinity;
    await attempt(s, now(), 'standard', x <= abortAt ? 'start' : 'abort', Math.min(x, abortAt));
  }
  const lead = (s.snapshot()[0]!.standard as any).hedge_lead_ms as number;
  const truth = median * Math.exp(sigma * normalQuantile(0.999));   // ≈ 9.6 s
  assert.ok(lead >= 0.85 * truth && lead <= 1.3 * truth, `lead ${lead} vs p99.9 ${Math.round(truth)}`);
});

test('the hedge lead follows standard\'s tail, not its mean, and a smaller miss budget moves it earlier', async () => {
  const { s, now } = scheduler();
  const t = now();
  for (let i = 0; i < 200; i++) { await attempt(s, now(), 'standard', 'start', i % 50 === 0 ? 8_000 : 500); }
  const [e] = s.snapshot();
  const lead = (e!.standard as any).hedge_lead_ms as number;
  assert.ok(lead >= 8_000, `the 2 % slow tail is covered: ${lead}`);
  const loose = new FlexScheduler({ ...DEFAULT_FLEX_POLICY, miss_budget: 0.05 }, BOUNDS, now);
  for (let i = 0; i < 200; i++) { await attempt(loose, now(), 'standard', 'start', i % 50 === 0 ? 8_000 : 500); }
  assert.ok(((loose.snapshot()[0]!.standard as any).hedge_lead_ms as number) < lead, 'a looser budget hedges later');
});

test('track(): a refused flex attempt counts as a refusal, an aborted one as censored', async () => {
  const { s, now } = scheduler();
  await attempt(s, now(), 'flex', 'refuse', 100);
  await attempt(s, now(), 'flex', 'abort', 3_000);
  await attempt(s, now(), 'flex', 'start', 1_000);
  const f = s.snapshot()[0]!.flex as any;
  assert.equal(f.observations, 3, "no time passed: nothing decayed");
  assert.ok(Math.abs(f.refusal_rate - 1 / 3) < 1e-3, `refusal rate ${f.refusal_rate}`);
  assert.ok(Math.abs(f.chance_to_start_within['5s'] - 1 / 3) < 1e-3, 'censored at 3 s: unknown beyond, so 1 of 3 by 5 s');
});

test('after a spell of refusals, flex stopped early by the standard it lost to does not keep flex locked out', async () => {
  const { s, at, now } = scheduler();
  // Two minutes of refusals: the policy rightly sends standard at once.
  for (let i = 0; i < 120; i++) { at(now() + 1_000); await attempt(s, now(), 'flex', 'refuse', 50); }
  assert.equal(s.advisor('vendor_a', 'gpt-5.4', now(), now() + 30_000).standardAt(now()).flexUnlikely, true, 'refusing: standard at once');
  // The queue recovers, but every request still goes to standard at once, and its flex attempt is
  // stopped when standard answers (≈ 0.6 s): those stops are all the policy hears for ten minutes.
  for (let i = 0; i < 600; i++) {
    at(now() + 1_000);
    await attempt(s, now(), 'flex', 'abort', 600);
    await attempt(s, now(), 'standard', 'start', 600);
  }
  const d = s.advisor('vendor_a', 'gpt-5.4', now(), now() + 30_000).standardAt(now());
  assert.equal(d.flexUnlikely, false, 'attempts stopped at 0.6 s say nothing about a start before 30 s: race again');
  assert.ok(d.at > now(), 'and hedge later, letting flex start');
});

test("standard's lead covers a slow tail known only from attempts stopped while still waiting", async () => {
  const { s, now } = scheduler();
  for (let i = 0; i < 95; i++) await attempt(s, now(), 'standard', 'start', 500 + i * 3);
  for (let i = 0; i < 5; i++) await attempt(s, now(), 'standard', 'abort', 30_000);   // flex won after 30 s
  const lead = (s.snapshot()[0]!.standard as any).hedge_lead_ms as number;
  assert.ok(lead >= 30_000, `5 % of standard attempts are known to take over 30 s: lead ${lead}`);
});

test('a wall clock stepped back does not make new observations weigh less than old ones', async () => {
  const { s, at, now } = scheduler();
  for (let i = 0; i < 10; i++) await attempt(s, now(), 'flex', 'start', 1_000);
  at(now() - 600_000);                                          // NTP steps the clock back 10 minutes
  await attempt(s, now(), 'flex', 'start', 1_000);
  const f = s.snapshot()[0]!.flex as any;
  assert.ok(f.observations <= 11 + 1e-9, `weights not inflated by the step: ${f.observations}`);
});
