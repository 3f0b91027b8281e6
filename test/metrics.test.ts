// The hot-path counters count in plain numbers and hand them to prom-client when the registry is
// read: every scrape must show every increment made before it, exactly once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetrics } from '../lib/metrics.ts';

/** The value of one series in the registry's exposition text, or undefined when it is absent. */
async function series(metrics: ReturnType<typeof createMetrics>, line: string): Promise<number | undefined> {
  const text = await metrics.registry.metrics();
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

test('a scrape shows each increment made before it once, and the next scrape adds only what came after', async () => {
  const m = createMetrics();
  for (let i = 0; i < 3; i++) m.requestsBy('responses', 200).inc();
  m.requestsBy('responses', '200').inc();            // the same series, whatever the value's type
  m.requestsBy('chat', 429).inc();
  m.outcomesBy('flex_committed', 'vendor_a', 'flex').inc();
  m.spendBy('managed').inc(1_500);
  m.spendBy('managed').inc(2_250);
  const requests = 'gateway_requests_total{endpoint="responses",status="200"}';
  assert.equal(await series(m, requests), 4);
  assert.equal(await series(m, 'gateway_requests_total{endpoint="chat",status="429"}'), 1);
  assert.equal(await series(m, 'gateway_routing_outcomes_total{reason="flex_committed",route="vendor_a",tier="flex"}'), 1);
  assert.equal(await series(m, 'gateway_spend_micro_usd_total{mode="managed"}'), 3_750);
  // Read again with nothing new: nothing counted twice.
  assert.equal(await series(m, requests), 4);
  m.requestsBy('responses', 200).inc();
  assert.equal(await series(m, requests), 5);
  // A single metric's get() runs the same hook.
  m.spendBy('managed').inc(250);
  const { values } = await m.spend.get();
  assert.deepEqual(values.map((v) => [v.labels.mode, v.value]), [['managed', 4_000]]);
});

test('a flex race counts its tier, and a missed deadline (raced or not), under its route and model', async () => {
  const m = createMetrics();
  const labels = { route: 'vendor_a', model: 'gpt-5.4', tier: 'standard', reason: 'flex_lost_race' };
  m.observeCommit(labels, 1_200, true, true);
  m.observeCommit({ ...labels, tier: 'flex', reason: 'flex_committed' }, 300, true, false);
  m.observeCommit(labels, 40, false, false);          // no race: neither counter moves
  // slots full: no race, but its deadline was missed
  m.observeCommit({ ...labels, reason: 'flex_slots_full' }, 9_000, false, true);
  assert.equal(await series(m, 'gateway_deadline_misses_total{route="vendor_a",model="gpt-5.4",reason="flex_slots_full"}'), 1);
  assert.equal(await series(m, 'gateway_flex_races_total{route="vendor_a",model="gpt-5.4",tier="standard"}'), 1);
  assert.equal(await series(m, 'gateway_flex_races_total{route="vendor_a",model="gpt-5.4",tier="flex"}'), 1);
  assert.equal(await series(m, 'gateway_deadline_misses_total{route="vendor_a",model="gpt-5.4",reason="flex_lost_race"}'), 1);
  assert.equal(await series(m, 'gateway_time_to_commit_seconds_count{route="vendor_a",model="gpt-5.4",tier="standard",reason="flex_lost_race"}'), 2);
});

test('a bad increment fails its caller and leaves the count and later scrapes whole', async () => {
  const m = createMetrics();
  m.spendBy('managed').inc(100);
  for (const bad of [Number.NaN, -1, Number.POSITIVE_INFINITY]) {
    assert.throws(() => m.spendBy('managed').inc(bad), TypeError);
  }
  assert.equal(await series(m, 'gateway_spend_micro_usd_total{mode="managed"}'), 100);
  m.spendBy('managed').inc(1);
  assert.equal(await series(m, 'gateway_spend_micro_usd_total{mode="managed"}'), 101);
});

test('hedges the calendar launched early are counted, with how much earlier in seconds', async () => {
  const m = createMetrics();
  m.hedgeAdvanced('vendor_a', 'gpt-5.4', 1_500);
  m.hedgeAdvanced('vendor_a', 'gpt-5.4', 250);
  assert.equal(await series(m, 'gateway_hedges_advanced_total{route="vendor_a",model="gpt-5.4"}'), 2);
  assert.equal(await series(m, 'gateway_hedge_advance_seconds_total{route="vendor_a",model="gpt-5.4"}'), 1.75);
});
