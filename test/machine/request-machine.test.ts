// The request machine under injected time (xstate SimulatedClock): exact hedge and backoff timing
// with fake attempts the test resolves by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createActor, SimulatedClock } from 'xstate';
import { requestMachine, startRequest, type MachineInput } from '../../lib/machine/request-machine.ts';
import { AttemptFailed, type Committed } from '../../lib/stream/attempt.ts';
import { fixedLeadHedge } from '../../lib/routing/flex-policy.ts';
import type { RouteName, Tier } from '../../lib/routes.ts';

interface Launched { route: RouteName; tier: Tier; at: number; signal: { aborted: boolean }; resolve(c: Committed): void; reject(e: unknown): void }

function harness(over: Partial<MachineInput> = {}) {
  const clock = new SimulatedClock();
  clock.set(1_000_000);
  const launched: Launched[] = [];
  const input: MachineInput = {
    routes: ['vendor_a'], flex: 'race', deadlineAt: 1_000_000 + 10_000, hedge: fixedLeadHedge(1_000_000 + 10_000, () => 2_000),
    now: () => clock.now(), random: () => 0.5,
    launch: (route, tier) => {
      const signal = { aborted: false };
      const committed = new Promise<Committed>((resolve, reject) => { launched.push({ route, tier, at: clock.now(), signal, resolve, reject }); });
      return { committed, abort: () => { signal.aborted = true; } };
    },
    ...over,
  };
  const run = startRequest(input, clock);
  return { clock, launched, run, input };
}

const committed = (route: RouteName, tier: Tier) => ({ route, tier } as unknown as Committed);
const fail = (kind: 'capacity' | 'transient' | 'fatal', status: number, retryAfterMs?: number) => new AttemptFailed({ kind, status, message: 'x', retryAfterMs });
const flush = () => new Promise((r) => setImmediate(r));

test('flex commits before the hedge: flex_committed, standard never launched', async () => {
  const { launched, run, clock } = harness();
  assert.equal(launched.length, 1);
  assert.equal(launched[0]!.tier, 'flex');
  clock.increment(5_000);
  launched[0]!.resolve(committed('vendor_a', 'flex'));
  const out = await run.outcome;
  assert.equal(out.reason, 'flex_committed');
  assert.equal(out.winner!.tier, 'flex');
  clock.increment(10_000);
  await flush();
  assert.equal(launched.length, 1);
  run.stop();
});

test('flex too slow: standard hedge launched exactly at deadline − lead, wins, flex aborted', async () => {
  const { launched, run, clock } = harness();
  clock.increment(7_999);
  await flush();
  assert.equal(launched.length, 1, 'no hedge before deadline − lead');
  clock.increment(1);
  await flush();
  assert.equal(launched.length, 2);
  assert.equal(launched[1]!.tier, 'standard');
  assert.equal(launched[1]!.at, 1_000_000 + 8_000);
  launched[1]!.resolve(committed('vendor_a', 'standard'));
  const out = await run.outcome;
  assert.equal(out.reason, 'flex_lost_race');
  assert.equal(launched[0]!.signal.aborted, true, 'the losing flex attempt is aborted');
  assert.equal(launched[1]!.signal.aborted, false, 'the winner keeps streaming');
  run.stop();
  assert.equal(launched[1]!.signal.aborted, true, 'stopping the request aborts the winner');
});

test('flex wins after the hedge launched: flex_won, standard aborted', async () => {
  const { launched, run, clock } = harness();
  clock.increment(8_000);
  await flush();
  launched[0]!.resolve(committed('vendor_a', 'flex'));
  const out = await run.outcome;
  assert.equal(out.reason, 'flex_won');
  assert.equal(launched[1]!.signal.aborted, true);
  run.stop();
});

test('flex capacity refusal: standard at once, flex_unavailable', async () => {
  const { launched, run } = harness();
  launched[0]!.reject(fail('capacity', 429));
  await flush();
  assert.equal(launched.length, 2);
  assert.equal(launched[1]!.tier, 'standard');
  assert.equal(launched[1]!.at, 1_000_000);
  launched[1]!.resolve(committed('vendor_a', 'standard'));
  assert.equal((await run.outcome).reason, 'flex_unavailable');
  run.stop();
});

test('retries honour Retry-After and count', async () => {
  const { launched, run, clock } = harness({ flex: 'off', retry: { count: 2, backoff: 'exponential', jitter: true } });
  launched[0]!.reject(fail('transient', 429, 3_000));
  await flush();
  clock.increment(2_999);
  await flush();
  assert.equal(launched.length, 1, 'not sooner than Retry-After');
  clock.increment(1);
  await flush();
  assert.equal(launched.length, 2);
  launched[1]!.reject(fail('transient', 503));
  await flush();
  // second retry: exponential ceiling 500 ms, full jitter 0.5 → 250 ms
  clock.increment(249);
  await flush();
  assert.equal(launched.length, 2);
  clock.increment(1);
  await flush();
  assert.equal(launched.length, 3);
  launched[2]!.resolve(committed('vendor_a', 'standard'));
  const out = await run.outcome;
  assert.equal(out.retries, 2);
  assert.equal(out.reason, 'standard_requested');
  run.stop();
});

test('a Retry-After longer than the backoff ceiling and the time to the deadline spends the route: the next route at once', async () => {
  const { launched, run } = harness({ routes: ['vendor_b', 'cloud_a'], flex: 'off', retry: { count: 3, backoff: 'exponential', jitter: false } });
  launched[0]!.reject(fail('transient', 429, 3_600_000));
  await flush();
  assert.equal(launched.length, 2, 'no hour-long sleep on vendor_b');
  assert.equal(launched[1]!.route, 'cloud_a');
  launched[1]!.resolve(committed('cloud_a', 'standard'));
  const out = await run.outcome;
  assert.equal(out.reason, 'fallback');
  assert.equal(out.retries, 0);
  run.stop();
});

test('a Retry-After past the deadline and the ceiling with nothing left fails at once, with the provider\'s wait in the failure', async () => {
  const { launched, run } = harness({ flex: 'off', retry: { count: 3, backoff: 'exponential', jitter: false } });
  launched[0]!.reject(fail('transient', 429, 60_000));
  const out = await run.outcome;
  assert.equal(out.winner, undefined);
  assert.equal(out.failure!.retryAfterMs, 60_000);
  assert.equal(launched.length, 1);
});

test('a Retry-After within the time left to the deadline is waited for, even past the backoff ceiling', async () => {
  const { launched, run, clock } = harness({ flex: 'off', deadlineAt: 1_000_000 + 120_000, retry: { count: 1, backoff: 'exponential', jitter: false } });
  launched[0]!.reject(fail('transient', 503, 30_000));
  await flush();
  clock.increment(29_999);
  await flush();
  assert.equal(launched.length, 1);
  clock.increment(1);
  await flush();
  assert.equal(launched.length, 2);
  launched[1]!.resolve(committed('vendor_a', 'standard'));
  assert.equal((await run.outcome).retries, 1);
  run.stop();
});

test('fallback to the next route after the retries of the first', async () => {
  const { launched, run } = harness({ routes: ['vendor_b', 'cloud_a'], flex: 'off' });
  launched[0]!.reject(fail('transient', 500));
  await flush();
  assert.equal(launched[1]!.route, 'cloud_a');
  launched[1]!.resolve(committed('cloud_a', 'standard'));
  const out = await run.outcome;
  assert.equal(out.reason, 'fallback');
  assert.equal(out.fallbacks, 1);
  assert.equal(out.routeIndex, 1);
  run.stop();
});

test('a fatal upstream refusal fails the request without retry', async () => {
  const { launched, run } = harness({ flex: 'off', retry: { count: 3, backoff: 'linear', jitter: false } });
  launched[0]!.reject(fail('fatal', 400));
  const out = await run.outcome;
  assert.equal(out.winner, undefined);
  assert.equal(out.failure!.status, 400);
  assert.equal(launched.length, 1);
});

test('nothing left to try: failed with the last failure', async () => {
  const { launched, run } = harness({ flex: 'off' });
  launched[0]!.reject(fail('transient', 503));
  const out = await run.outcome;
  assert.equal(out.failure!.status, 503);
});

test('stopping the request aborts every running attempt', async () => {
  const { launched, run, clock } = harness();
  clock.increment(8_000);
  await flush();
  run.stop();
  assert.ok(launched.every((l) => l.signal.aborted));
});

test('the hedge advisor says flex is unlikely: standard at once beside flex, flex_unlikely when standard wins', async () => {
  const asked: number[] = [];
  const { launched, run } = harness({ hedge: { standardAt: (now) => { asked.push(now); return { at: now, flexUnlikely: true }; } } });
  assert.deepEqual(launched.map((l) => [l.tier, l.at]), [['flex', 1_000_000], ['standard', 1_000_000]]);
  assert.deepEqual(asked, [1_000_000]);
  launched[1]!.resolve(committed('vendor_a', 'standard'));
  const out = await run.outcome;
  assert.equal(out.reason, 'flex_unlikely');
  assert.equal(launched[0]!.signal.aborted, true);
  run.stop();
});

test('the advisor is asked again at each wake-up it names, and may move the hedge later', async () => {
  const asked: number[] = [];
  const plan = [1_000_000 + 3_000, 1_000_000 + 6_000, 1_000_000 + 6_000];
  const { launched, run, clock } = harness({ hedge: { standardAt: (now) => { asked.push(now); return { at: plan[asked.length - 1]!, flexUnlikely: false }; } } });
  clock.increment(3_000);
  await flush();
  assert.equal(launched.length, 1, 'the first wake-up moved the hedge to +6 s');
  clock.increment(3_000);
  await flush();
  assert.deepEqual(asked, [1_000_000, 1_003_000, 1_006_000]);
  assert.equal(launched[1]!.tier, 'standard');
  assert.equal(launched[1]!.at, 1_006_000);
  launched[0]!.resolve(committed('vendor_a', 'flex'));
  assert.equal((await run.outcome).reason, 'flex_won');
  run.stop();
});

test('requests in flight at once keep their own state: each starts from its own context', async () => {
  // Every request's first snapshot is made from one shared `running` snapshot; what one request
  // does must not show in another's.
  const a = harness();
  const b = harness({ routes: ['vendor_b', 'cloud_a'], flex: 'off' });
  assert.deepEqual(a.launched.map((l) => [l.route, l.tier]), [['vendor_a', 'flex']]);
  assert.deepEqual(b.launched.map((l) => [l.route, l.tier]), [['vendor_b', 'standard']]);
  b.launched[0]!.reject(fail('transient', 500));
  await flush();
  assert.equal(b.launched[1]!.route, 'cloud_a');
  a.launched[0]!.resolve(committed('vendor_a', 'flex'));
  const outA = await a.run.outcome;
  assert.deepEqual([outA.reason, outA.routeIndex, outA.fallbacks, outA.failure], ['flex_committed', 0, 0, undefined]);
  b.launched[1]!.resolve(committed('cloud_a', 'standard'));
  const outB = await b.run.outcome;
  assert.deepEqual([outB.reason, outB.routeIndex, outB.fallbacks], ['fallback', 1, 1]);
  assert.equal(a.launched.length, 1, 'the hedge of the first request was never launched by the second');
  a.run.stop();
  b.run.stop();
});

test('xstate\'s own actor on the same machine: arrival launches what startRequest launches, and a commit ends it in committed', async () => {
  // startRequest makes the arrival snapshot once and runs `running`'s entry actions itself; an
  // actor of xstate's (createActor) enters the machine by its own algorithm. Both must launch the same.
  for (const flex of ['race', 'off'] as const) {
    const h = harness({ flex });
    const launched: [RouteName, Tier][] = [];
    const attempts: ((c: Committed) => void)[] = [];
    const actor = createActor(requestMachine, {
      clock: h.clock,
      input: {
        ...h.input,
        launch: (route, tier) => {
          launched.push([route, tier]);
          return { committed: new Promise<Committed>((resolve) => attempts.push(resolve)), abort: () => {} };
        },
      },
    });
    actor.start();
    assert.deepEqual(launched, h.launched.map((l) => [l.route, l.tier]), `flex ${flex}`);
    assert.deepEqual(launched, [['vendor_a', flex === 'race' ? 'flex' : 'standard']]);
    assert.equal(actor.getSnapshot().value, 'running');
    attempts[0]!(committed('vendor_a', launched[0]![1]));
    await flush();
    assert.equal(actor.getSnapshot().value, 'committed');
    assert.equal(actor.getSnapshot().status, 'done');
    h.launched[0]!.resolve(committed('vendor_a', h.launched[0]!.tier));
    assert.equal((await h.run.outcome).reason, actor.getSnapshot().context.reason);
    h.run.stop();
    actor.stop();
  }
});

test('a launch that throws on arrival fails the request with its message', async () => {
  const { run } = harness({ launch: () => { throw new Error('no adapter'); } });
  const out = await run.outcome;
  assert.equal(out.winner, undefined);
  assert.deepEqual(out.failure, { kind: 'transient', status: 502, message: 'no adapter' });
});

test('a retry scheduled but cancelled by a flex commit during its backoff is not counted as performed', async () => {
  const { launched, run, clock } = harness({ retry: { count: 2, backoff: 'exponential', jitter: false } });
  clock.increment(8_000); await flush();                          // the hedge: standard at deadline − lead
  assert.equal(launched[1]!.tier, 'standard');
  launched[1]!.reject(fail('transient', 503)); await flush();     // → a 250 ms backoff
  clock.increment(100); await flush();
  launched[0]!.resolve(committed('vendor_a', 'flex'));            // flex starts during the backoff
  const out = await run.outcome;
  clock.increment(10_000); await flush();
  assert.equal(launched.filter((l) => l.tier === 'standard').length, 1, 'no retry ran');
  assert.equal(out.retries, 0);
  run.stop();
});

test('a race that ends with nothing served reports flex_unavailable, not the flex_committed it started from', async () => {
  const { launched, run } = harness();
  launched[0]!.reject(fail('capacity', 429));                     // flex refused → standard at once
  await flush();
  launched[1]!.reject(fail('transient', 503));                    // standard fails, nothing left
  const out = await run.outcome;
  assert.equal(out.winner, undefined);
  assert.equal(out.reason, 'flex_unavailable');
});

test('a race stopped before anything served (its caller gone) is abandoned, not flex_unavailable; a launch that throws is not', async () => {
  const { launched, run, clock } = harness();
  clock.increment(8_000);
  await flush();
  assert.equal(launched.length, 2, 'flex racing, the hedge launched');
  run.stop();
  const out = await run.outcome;
  assert.equal(out.winner, undefined);
  assert.equal(out.reason, 'abandoned');
  assert.deepEqual(launched.map((l) => l.signal.aborted), [true, true], 'both attempts aborted');

  const thrown = harness({ launch: () => { throw new Error('no adapter'); } });
  const failed = await thrown.run.outcome;
  assert.equal(failed.reason, 'flex_unavailable', 'a launch that threw failed the request; nobody abandoned it');
  assert.match(failed.failure!.message, /no adapter/);
});

test('the gateway refuses standard a connection while flex holds one: flex yields it and standard goes again; a provider\'s refusal does not', async () => {
  const gate = new AttemptFailed({ kind: 'capacity', status: 429, message: 'org share', retryAfterMs: 1_000, gatewayCode: 'rate_limit_exceeded' });
  const { launched, run, clock } = harness();
  clock.increment(8_000);
  await flush();
  assert.equal(launched[1]!.tier, 'standard', 'the hedge');
  launched[1]!.reject(gate);
  await flush();
  assert.equal(launched[0]!.signal.aborted, true, 'flex gave up its connection');
  assert.deepEqual(launched.map((l) => [l.tier, l.at]), [['flex', 1_000_000], ['standard', 1_008_000], ['standard', 1_008_000]], 'standard again, at once');
  launched[2]!.resolve(committed('vendor_a', 'standard'));
  const out = await run.outcome;
  assert.deepEqual([out.winner?.tier, out.reason, out.retries], ['standard', 'flex_lost_race', 0]);

  // Refused again: nothing holds a connection of this request any more; the request fails with it.
  const again = harness();
  again.clock.increment(8_000);
  await flush();
  again.launched[1]!.reject(gate);
  await flush();
  again.launched[2]!.reject(gate);
  const failed = await again.run.outcome;
  assert.deepEqual([failed.winner, failed.failure?.gatewayCode], [undefined, 'rate_limit_exceeded']);

  // The provider's own 429 on standard leaves flex racing, as before.
  const provider = harness();
  provider.clock.increment(8_000);
  await flush();
  provider.launched[1]!.reject(fail('capacity', 429));
  await flush();
  assert.equal(provider.launched[0]!.signal.aborted, false);
  assert.equal(provider.launched.length, 2);
  provider.launched[0]!.resolve(committed('vendor_a', 'flex'));
  assert.equal((await provider.run.outcome).reason, 'flex_won');
});

test('the advisor hears when its hedge is no longer wanted (a hedge booked ahead is given back)', async () => {
  for (const end of ['flex', 'stop', 'standard', 'flex refused'] as const) {
    let done = 0;
    const advisor = { ...fixedLeadHedge(1_010_000, () => 2_000), done: () => { done++; } };
    const { launched, run, clock } = harness({ hedge: advisor });
    assert.equal(done, 0, 'not while the hedge is awaited');
    if (end === 'flex') launched[0]!.resolve(committed('vendor_a', 'flex'));
    if (end === 'stop') run.stop();
    if (end === 'standard') {
      clock.increment(8_000);
      await flush();
      launched[1]!.resolve(committed('vendor_a', 'standard'));
    }
    if (end === 'flex refused') {
      // Standard runs at once: the hedge is given back now, not when the answer ends.
      launched[0]!.reject(fail('capacity', 429));
      await flush();
      assert.equal(launched[1]!.tier, 'standard');
      assert.ok(done >= 1, 'given back as standard launches');
      launched[1]!.resolve(committed('vendor_a', 'standard'));
    }
    await run.outcome;
    run.stop();
    assert.ok(done >= 1, `ended by ${end}`);
  }
});
