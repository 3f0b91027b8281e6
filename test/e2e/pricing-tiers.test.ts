// The three pricing rules end to end, through the simulator replaying provider answers
// (test/fixtures) and a SimulatedClock:
// - Anthropic's 1-hour cache writes cost their own rate, on vendor C and on Bedrock (cloud_b),
//   streamed, not, passed through or translated; the usage record keeps the total of the writes
//   and the cost of both kinds.
// - gemini-3.1-pro-preview above 200k input tokens bills the whole request at its long-context
//   rates, and the admission hold of such a prompt is taken at them too.
// - gemini-3.8-flash's promotion ends with 2026: a request pays (and is held at) the prices in
//   force when it started, even when it ends after midnight.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, sim, waitFor, type TestGateway } from '../helpers/gateway.ts';
import { OWN_FIXTURES } from '../helpers/recorded.ts';

let t: TestGateway;

before(async () => { t = await startTestGateway({ simulatedTime: true, config: { simulator: { fixturesDir: OWN_FIXTURES } } }); });
after(() => t.close());

/** ⌈tokens × USD per 1M⌉ in micro-USD, as the catalog rounds each part. */
const part = (tokens: number, usdPerM: number): number => (tokens > 0 ? Math.ceil(tokens * usdPerM) : 0);

async function post(key: string, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${t.url}${path}`, {
    method: 'POST', signal, body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  });
}

/** The cost a response reports: x-service-cost, else the last usage.cost of its stream. */
async function costReported(res: Response): Promise<{ cost: number; text: string }> {
  assert.equal(res.status, 200);
  const text = await res.text();
  const header = res.headers.get('x-service-cost');
  if (header !== null) return { cost: Number(header), text };
  const costs = [...text.matchAll(/"cost":\{"total_micro_usd":(\d+)/g)].map((m) => Number(m[1]));
  assert.ok(costs.length > 0, `a cost in the stream: ${text.slice(-400)}`);
  return { cost: costs.at(-1)!, text };
}

/** What the ledger holds for an org's one request in flight (its hold is taken at admission),
 *  once `inFlight` requests of the gateway's are. */
async function heldWhileInFlight(orgId: string, inFlight = 1): Promise<number> {
  await waitFor(() => t.gw.services.inflight.size === inFlight, 'the request in flight');
  const r = await t.admin('GET', `/admin/v1/orgs/${orgId}/ledger`);
  return r.json.snapshot.reservedMicroUsd as number;
}

async function records(key: string): Promise<any[]> {
  await waitFor(() => t.gw.services.inflight.size === 0, 'nothing in flight');
  await t.gw.services.usage.flush();
  const r = await fetch(`${t.url}/v1/usage/requests?limit=100`, { headers: { authorization: `Bearer ${key}` } });
  return ((await r.json()) as any).data.reverse();
}

// ── Anthropic 1-hour cache writes ──────────────────────────────────────────────────────────────

test('Anthropic 1-hour cache writes cost 6.00 per M on Sonnet, on vendor C and Bedrock, streamed or not, in any caller format', async () => {
  const org = await t.newOrg({ balance: 100_000_000 });
  const messages = (replay: string, extra: Record<string, unknown> = {}) => ({
    model: 'claude-sonnet-4-6', max_tokens: 100, start_within: 'now', ...extra,
    messages: [{ role: 'user', content: sim({ replay: `anthropic-messages/${replay}` }) }],
  });
  // 12 uncached in at 3.00, 100,000 written to the 1-hour cache at 6.00 (not the 5-minute 3.75),
  // out at 15.00: 29 tokens in the non-streamed body, 30 in the stream.
  const expected = (output: number) => part(12, 3) + part(100_000, 6) + part(output, 15);
  const cases: Array<[string, string, unknown, number]> = [
    ['vendor C, non-streamed, passthrough', '/v1/messages', messages('cache-write-1h.json'), expected(29)],
    ['vendor C, streamed, passthrough', '/v1/messages', messages('cache-write-1h.chunks.txt', { stream: true, include_cost: true }), expected(30)],
    ['vendor C, translated to Responses', '/v1/responses', {
      model: 'claude-sonnet-4-6', start_within: 'now', input: sim({ replay: 'anthropic-messages/cache-write-1h.chunks.txt' }),
    }, expected(30)],
    // The gateway streams from Bedrock for a non-streamed caller too.
    ['Bedrock, non-streamed', '/v1/messages', messages('cache-write-1h.chunks.txt', { provider: ['cloud_b'] }), expected(30)],
    ['Bedrock, streamed', '/v1/messages', messages('cache-write-1h.chunks.txt', { provider: ['cloud_b'], stream: true, include_cost: true }), expected(30)],
  ];
  const costs: number[] = [];
  for (const [name, path, body, cost] of cases) {
    const got = await costReported(await post(org.key, path, body));
    assert.equal(got.cost, cost, name);
    costs.push(got.cost);
  }
  assert.equal(expected(29), 600_471);
  // The record's cache_write_tokens is the total of both kinds; its cost prices each at its rate.
  const recs = await records(org.key);
  assert.deepEqual(recs.map((r) => [r.served_route, r.cache_write_tokens, r.cost_micro_usd]),
    [['vendor_c', 100_000, costs[0]], ['vendor_c', 100_000, costs[1]], ['vendor_c', 100_000, costs[2]],
      ['cloud_b', 100_000, costs[3]], ['cloud_b', 100_000, costs[4]]]);
  const ledger = (await t.admin('GET', `/admin/v1/orgs/${org.orgId}/ledger`)).json.entries;
  assert.deepEqual(ledger.filter((e: any) => e.kind === 'settle').map((e: any) => e.amount_micro_usd).sort(), [...costs].sort());
});

// ── Gemini 3.1 Pro long context ─────────────────────────────────────────────────────────────────

test('gemini-3.1-pro-preview: a 250k-token prompt is charged 4.00 / 18.00 per M for the whole request', async () => {
  const org = await t.newOrg({ balance: 100_000_000 });
  const res = await post(org.key, '/v1/interactions', {
    model: 'gemini-3.1-pro-preview', start_within: 'now', input: sim({ replay: 'gemini-interactions/long-prompt.json' }),
  });
  const { cost, text } = await costReported(res);
  const usage = JSON.parse(text).usage;
  assert.equal(usage.total_input_tokens, 250_000);
  // 250,000 in, 19 out + 32 thought (billed as output).
  assert.equal(cost, part(250_000, 4) + part(19 + 32, 18));
  assert.equal(cost, 1_000_918);
});

test('gemini-3.1-pro-preview: the admission hold of a prompt estimated above 200k tokens is taken at the long-context price', async () => {
  const org = await t.newOrg({ balance: 100_000_000 });
  const MAX_OUTPUT = 500;
  /** A body of about `bytes` bytes (the hold estimates ⌈bytes / 4⌉ input tokens). */
  const body = (bytes: number) => JSON.stringify({
    model: 'gemini-3.1-pro-preview', start_within: 'now', generation_config: { max_output_tokens: MAX_OUTPUT },
    input: `${'word '.repeat(Math.floor(bytes / 5))}${sim({ output_tokens: 100, tokens_per_s: 200 })}`,
  });
  for (const [bytes, rates] of [[1_000_000, { input: 4, output: 18 }], [700_000, { input: 2, output: 12 }]] as const) {
    const b = body(bytes);
    const inputEstimate = Math.ceil(Buffer.byteLength(b) / 4);
    assert.equal(inputEstimate > 200_000, rates.input === 4);
    const answer = post(org.key, '/v1/interactions', b);
    const held = await heldWhileInFlight(org.orgId);
    await costReported(await answer);
    await waitFor(() => t.gw.services.inflight.size === 0, 'the request settled');
    assert.equal(held, part(inputEstimate, rates.input) + part(MAX_OUTPUT, rates.output), `a ${bytes}-byte body`);
  }
});

// ── a price that changes on a date ──────────────────────────────────────────────────────────────

test('gemini-3.8-flash: a request started at 2026-12-31T23:59:59Z pays (and is held at) the promo price, even ending after midnight; one started at 2027-01-01T00:00:00Z the new price', async () => {
  const clock = t.clock!;
  await waitFor(() => t.gw.services.inflight.size === 0, 'nothing in flight');
  const MAX_OUTPUT = 1_000;
  const body = JSON.stringify({
    model: 'gemini-3.8-flash', start_within: 'now', generation_config: { max_output_tokens: MAX_OUTPUT },
    input: `hello ${sim({ output_tokens: 200, tokens_per_s: 100 })}`,
  });
  const inputEstimate = Math.ceil(Buffer.byteLength(body) / 4);
  const promo = { input: 0.75, output: 3.75 };
  const after2026 = { input: 1.5, output: 7.5 };
  /** Cost of a served answer's usage at `rates` (Interactions: thought tokens are output). */
  const priced = (u: any, rates: { input: number; output: number }) =>
    part(u.total_input_tokens, rates.input) + part(u.total_output_tokens + u.total_thought_tokens, rates.output);

  /** Starts a request at the clock's time; resolves once it is held. */
  const start = async () => {
    const org = await t.newOrg({ balance: 100_000_000 });
    const answer = post(org.key, '/v1/interactions', body);
    const inFlight = t.gw.services.inflight.size;
    const held = await heldWhileInFlight(org.orgId, inFlight + 1);
    return { held, finished: (async () => {
      const { cost, text } = await costReported(await answer);
      const rec = (await records(org.key))[0];
      return { cost, usage: JSON.parse(text).usage, rec };
    })() };
  };

  clock.set(Date.parse('2026-12-31T23:59:59Z'));
  const lastPromo = await start();
  clock.set(Date.parse('2027-01-01T00:00:00Z'));
  assert.equal(t.gw.services.inflight.size, 1, 'midnight passes while the first one streams');
  const firstNew = await start();
  clock.set(Date.parse('2027-01-01T00:00:01Z'));
  const [before, from] = await Promise.all([lastPromo.finished, firstNew.finished]);

  assert.equal(lastPromo.held, part(inputEstimate, promo.input) + part(MAX_OUTPUT, promo.output));
  assert.equal(before.cost, priced(before.usage, promo));
  assert.equal(before.rec.cost_micro_usd, before.cost);
  assert.deepEqual([before.rec.started_at_ms, before.rec.at_ms >= Date.parse('2027-01-01T00:00:00Z')], [Date.parse('2026-12-31T23:59:59Z'), true]);

  assert.equal(firstNew.held, part(inputEstimate, after2026.input) + part(MAX_OUTPUT, after2026.output));
  assert.equal(from.cost, priced(from.usage, after2026));
  assert.equal(from.rec.cost_micro_usd, from.cost);
  assert.ok(from.cost > before.cost, `${from.cost} > ${before.cost}`);
});
