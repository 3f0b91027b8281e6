// The flex policy adapting end to end: the real gateway on port 0 against the built-in simulator,
// whose flex queue backs up for a while and recovers (a congestion period, read on the gateway's
// SimulatedClock). Short deadlines race while flex is healthy, go to standard at once after the
// queue backs up, and race again after it recovers. The admin endpoint and metrics show it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, waitFor, sim, ADMIN_TOKEN, type TestGateway } from '../helpers/gateway.ts';
import { DEFAULT_FLEX_POLICY } from '../../lib/routing/flex-policy.ts';
import { runCli } from '../../lib/cli.ts';

const CONGESTED = { fromMs: 120_000, toMs: 240_000 };
let t: TestGateway;
let client: OpenAI;
let t0: number;
const stats = () => t.gw.simulator!.stats;
const flush = () => new Promise((r) => setTimeout(r, 10));

before(async () => {
  t = await startTestGateway({
    simulatedTime: true,
    config: {
      hedge: { initial_lead_ms: 1_000, min_lead_ms: 1_000, max_lead_ms: 1_000 },
      // A handful of requests: act on the point estimates (the confidence bounds need dozens of
      // observations; test/routing/flex-policy.test.ts covers them).
      flex_policy: { ...DEFAULT_FLEX_POLICY, min_flex_chance: 0.2, min_observations: 3, confidence_z: 0 },
      simulator: {
        // Healthy: flex starts at once (standard takes 100 ms of real time, so a flex attempt
        // launched beside it wins). Backed up: flex would start after 10 minutes.
        standard: { startMs: 100 },
        flex: { startMs: { min: 0, max: 0 }, congestion: [{ ...CONGESTED, startMs: { min: 600_000, max: 600_000 } }] },
      },
    },
  });
  t0 = t.clock!.now();
  const org = await t.newOrg({ ownKeys: ['vendor_a'] });
  client = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
});
after(() => t.close());

/** One request with a 5 s deadline. If it has not answered once its attempts reached the
 *  simulator, time moves in 250 ms steps until a standard attempt goes out (the hedge). */
async function short(): Promise<{ reason: string; upstream: number; waitedMs: number }> {
  const before = stats().requests;
  const start = t.clock!.now();
  let done = false;
  const pending = client.responses.create({ model: 'gpt-5.4', input: sim({}), start_within: '00h-00m-05s' } as any).withResponse()
    .finally(() => { done = true; });
  await waitFor(() => done || stats().requests > before, 'the first attempt');
  await flush();
  while (!done && stats().requests === before + 1 && t.clock!.now() - start < 5_000) {
    t.clock!.increment(250);
    await flush();
  }
  const { response } = await pending;
  return { reason: response.headers.get('x-service-flex-reason')!, upstream: stats().requests - before, waitedMs: t.clock!.now() - start };
}

test('healthy → backed up → recovered: short deadlines race, go to standard at once, then race again', async () => {
  for (let i = 0; i < 4; i++) assert.equal((await short()).reason, 'flex_committed', 'healthy: flex starts at once');

  t.clock!.set(t0 + CONGESTED.fromMs + 10_000);
  const backedUp: string[] = [];
  for (let i = 0; i < 8; i++) backedUp.push((await short()).reason);
  assert.equal(backedUp[0], 'flex_lost_race', 'the first requests still race: the hedge wins');
  const turned = backedUp.indexOf('flex_unlikely');
  assert.ok(turned > 0 && turned <= 5, `turned to standard at once after a few lost races: ${backedUp}`);
  assert.ok(backedUp.slice(turned).every((r) => r === 'flex_unlikely'), `and stays there: ${backedUp}`);
  const atOnce = await short();
  assert.deepEqual(atOnce, { reason: 'flex_unlikely', upstream: 2, waitedMs: 0 }, 'standard launched at arrival (flex beside it), no waiting');

  const seen = await t.admin('GET', '/admin/v1/scheduler');
  assert.equal(seen.status, 200);
  const est = seen.json.estimates.find((e: any) => e.route === 'vendor_a' && e.model === 'gpt-5.4');
  assert.ok(est.flex.chance_to_start_within['5s'] < 0.2, `the scheduler shows the backed-up queue: ${JSON.stringify(est.flex)}`);
  assert.ok(est.standard.observations > 0 && est.standard.hedge_lead_ms === 1_000);
  assert.equal(seen.json.policy.miss_budget, 0.001);

  t.clock!.set(t0 + CONGESTED.toMs + 5_000);
  const recovered: Array<{ reason: string; upstream: number }> = [];
  for (let i = 0; i < 6; i++) recovered.push(await short());
  assert.ok(recovered.every((r) => r.reason === 'flex_won' || r.reason === 'flex_committed' || r.reason === 'flex_unlikely'), JSON.stringify(recovered));
  const last = recovered.at(-1)!;
  assert.deepEqual({ reason: last.reason, upstream: last.upstream }, { reason: 'flex_committed', upstream: 1 }, `racing again: ${JSON.stringify(recovered)}`);

  const metrics = await (await fetch(`${t.url}/metrics`)).text();
  assert.match(metrics, /gateway_flex_races_total\{route="vendor_a",model="gpt-5\.4",tier="flex"\} \d+/);
  assert.match(metrics, /gateway_flex_races_total\{route="vendor_a",model="gpt-5\.4",tier="standard"\} \d+/);
  assert.match(metrics, /gateway_time_to_commit_seconds_count\{route="vendor_a",model="gpt-5\.4",tier="standard",reason="flex_unlikely"\} \d+/);
});

test('GET /admin/v1/scheduler needs the admin token; `gateway scheduler` prints it', async () => {
  const res = await fetch(`${t.url}/admin/v1/scheduler`);
  assert.equal(res.status, 401);
  const cli = await runCli(['scheduler'], { GATEWAY_URL: t.url, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN });
  assert.equal(cli.status, 200);
  assert.equal(JSON.parse(cli.body).estimates[0].route, 'vendor_a');
});
