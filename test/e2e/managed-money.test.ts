// Managed money end to end: settlement is exact to the micro-USD,
// cash before credit; parallel admissions never pass the ceilings the ledger rules allow given the
// holds; and no exit of a request leaks a hold (client gone, upstream reset, in-stream error,
// failure before commit), each charged what lib/http/pipeline.ts says.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, waitFor, sim, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;

before(async () => { t = await startTestGateway({ simulatedTime: true }); });
after(() => t.close());

// ── helpers ──────────────────────────────────────────────────────────────────────────────────

const clientFor = (key: string): OpenAI => new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });

async function ledgerOf(orgId: string): Promise<{ snapshot: any; entries: any[] }> {
  const r = await t.admin('GET', `/admin/v1/orgs/${orgId}/ledger`);
  assert.equal(r.status, 200);
  return r.json;
}

/** gpt-5.4-mini standard, micro-USD per million tokens. */
const MINI = { input: 750_000, output: 4_500_000 };
const part = (tokens: number, perM: number): number => (tokens > 0 ? Math.ceil((tokens * perM) / 1e6) : 0);
const miniCost = (input: number, output: number): number => part(input, MINI.input) + part(output, MINI.output);
/** The hold at admission: ⌈bytes/4⌉ input tokens + the output cap, standard price. */
const holdOf = (bodyBytes: number, maxOutput = 4_096): number => miniCost(Math.ceil(bodyBytes / 4), maxOutput);
/** What pipeline.ts charges for a stream that ended without the provider's usage: vendor A's
 *  Responses wire counts 64 bytes per output token at most (its codec's bytesPerOutputToken). */
const unpricedEstimate = (bodyBytes: number, bytesOut: number, maxOutput = 4_096): number =>
  bytesOut === 0 ? 0 : miniCost(Math.ceil(bodyBytes / 4), Math.min(maxOutput, Math.ceil(bytesOut / 64)));

const post = (key: string, body: string, signal?: AbortSignal, path = '/v1/responses'): Promise<Response> =>
  fetch(`${t.url}${path}`, { method: 'POST', body, signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });

const mini = (directive: Record<string, unknown>, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ model: 'gpt-5.4-mini', input: `hello ${sim(directive)}`, start_within: 'now', ...extra });

const settles = (entries: any[]): any[] => entries.filter((e) => e.kind === 'settle' || e.kind === 'settle_after_expiry');

async function assertNothingHeld(orgId: string): Promise<any> {
  await waitFor(() => t.gw.services.inflight.size === 0, 'no request in flight');
  const { snapshot } = await ledgerOf(orgId);
  assert.equal(snapshot.reservedMicroUsd, 0, 'nothing reserved');
  assert.equal(snapshot.inFlight, 0, 'nothing in flight');
  return snapshot;
}

/** Bytes the gateway wrote before the error frame it ends a broken Responses stream with. */
const beforeGatewayErrorFrame = (text: string): string => text.slice(0, text.lastIndexOf('event: error\n'));

/** The bytes of a stream's frames that carry output, what a broken stream's output is estimated
 *  from: not those that repeat the request or open the answer (Responses' response.created,
 *  in_progress and failed echo the request's instructions and tools; Messages' message_start and
 *  the ping after it). */
const outputBytes = (text: string): number => text.split(/(?<=\n\n)/)
  .filter((frame) => !/^event: (response\.(created|in_progress|failed)|message_start|ping)\n/.test(frame))
  .reduce((n, frame) => n + Buffer.byteLength(frame), 0);

// ── settlement ───────────────────────────────────────────────────────────────────────────────

test('settlement is exact: cash debited by the sum of the reported costs, today\'s spend equals it, nothing reserved', async () => {
  const B = 5_000_000;
  const org = await t.newOrg({ balance: B });
  const c = clientFor(org.key);
  const costs: number[] = [];

  // Non-streamed: x-service-cost (equal to usage.cost and to the price of the reported tokens).
  for (const [out, extra] of [[5, {}], [37, { max_output_tokens: 100 }], [1, { include_cost: true }]] as const) {
    const { data, response } = await c.responses.create({ model: 'gpt-5.4-mini', input: `q ${sim({ output_tokens: out })}`, start_within: 'now', ...extra } as any).withResponse();
    const cost = Number(response.headers.get('x-service-cost'));
    assert.equal(cost, miniCost(data.usage!.input_tokens, data.usage!.output_tokens));
    if ((extra as any).include_cost) assert.equal((data.usage as any).cost.total_micro_usd, cost);
    costs.push(cost);
  }
  // Streamed with include_cost: usage.cost in the usage frame.
  const stream: any = await c.responses.create({ model: 'gpt-5.4-mini', input: `s ${sim({ output_tokens: 12 })}`, start_within: 'now', stream: true, include_cost: true } as any);
  let completed: any;
  for await (const ev of stream) if (ev.type === 'response.completed') completed = ev.response;
  assert.equal(completed.usage.cost.total_micro_usd, miniCost(completed.usage.input_tokens, 12));
  costs.push(completed.usage.cost.total_micro_usd);
  // Chat, non-streamed and streamed (include_usage + include_cost).
  const chat = await c.chat.completions.create({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: `c ${sim({ output_tokens: 9 })}` }], start_within: 'now' } as any).withResponse();
  costs.push(Number(chat.response.headers.get('x-service-cost')));
  const chatStream: any = await c.chat.completions.create({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: `c ${sim({ output_tokens: 21 })}` }], start_within: 'now', stream: true, stream_options: { include_usage: true }, include_cost: true } as any);
  let chatCost: number | undefined;
  for await (const ch of chatStream) if (ch.usage?.cost) chatCost = ch.usage.cost.total_micro_usd;
  assert.equal(typeof chatCost, 'number');
  costs.push(chatCost!);
  // Messages on a vendor C model (another price list), non-streamed.
  const msg = await post(org.key, JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: `m ${sim({ output_tokens: 7 })}` }], start_within: 'now' }), undefined, '/v1/messages');
  assert.equal(msg.status, 200);
  const msgBody: any = await msg.json();
  const msgCost = Number(msg.headers.get('x-service-cost'));
  assert.equal(msgCost, Math.ceil(msgBody.usage.input_tokens * 1) + Math.ceil(7 * 5), 'claude-haiku-4-5: 1 and 5 µUSD a token');
  costs.push(msgCost);

  const total = costs.reduce((a, b) => a + b, 0);
  const s = await assertNothingHeld(org.orgId);
  const { entries } = await ledgerOf(org.orgId);
  assert.equal(s.cashMicroUsd, B - total);
  assert.equal(s.creditMicroUsd, 0);
  assert.equal(s.dailyUsedMicroUsd, total);
  assert.deepEqual(settles(entries).map((e) => e.amount_micro_usd).sort((a, b) => a - b), [...costs].sort((a, b) => a - b));
  const lim: any = await (await fetch(`${t.url}/v1/limits`, { headers: { authorization: `Bearer ${org.key}` } })).json();
  assert.equal(lim.managed.balance.remaining_micro_usd, B - total);
  assert.equal(lim.managed.daily_spend.used_micro_usd, total);
  assert.equal(lim.managed.balance.reserved_micro_usd, 0);
});

test('a stream settles the provider\'s usage even when the caller asked no cost: the same amount as the request non-streamed, on every route and format', async () => {
  const org = await t.newOrg({ balance: 50_000_000 });
  const text = (n: number) => `count to ${n} ${sim({ output_tokens: n })}`;
  const cases: Array<[string, string, (stream: boolean) => Record<string, unknown>]> = [
    ['responses → vendor_a', '/v1/responses', (stream) => ({ model: 'gpt-5.4-mini', input: text(11), start_within: 'now', stream })],
    ['chat → vendor_a (no include_usage)', '/v1/chat/completions', (stream) => ({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: text(12) }], start_within: 'now', stream })],
    ['interactions → vendor_b', '/v1/interactions', (stream) => ({ model: 'gemini-3.5-flash', input: text(13), start_within: 'now', stream })],
    ['messages → vendor_c', '/v1/messages', (stream) => ({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: text(14) }], start_within: 'now', stream })],
    ['responses → cloud_a', '/v1/responses', (stream) => ({ model: 'gemini-3.5-flash', input: text(15), start_within: 'now', provider: ['cloud_a'], stream })],
    ['messages → cloud_b', '/v1/messages', (stream) => ({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: text(16) }], start_within: 'now', provider: ['cloud_b'], stream })],
    ['chat → vendor_c (translated)', '/v1/chat/completions', (stream) => ({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: text(17) }], start_within: 'now', stream })],
  ];
  const lastSettle = async (): Promise<number> => settles((await ledgerOf(org.orgId)).entries)[0].amount_micro_usd;
  for (const [what, path, body] of cases) {
    const plain = await post(org.key, JSON.stringify(body(false)), undefined, path);
    assert.equal(plain.status, 200, `${what}: ${await plain.clone().text()}`);
    await plain.arrayBuffer();
    const cost = Number(plain.headers.get('x-service-cost'));
    assert.ok(cost > 0, what);
    assert.equal(await lastSettle(), cost, `${what}: non-streamed settles x-service-cost`);
    const streamed = await post(org.key, JSON.stringify(body(true)), undefined, path);
    assert.equal(streamed.status, 200, what);
    assert.equal(streamed.headers.get('x-service-cost'), null);
    await streamed.arrayBuffer();
    await waitFor(() => t.gw.services.inflight.size === 0, 'the stream to settle');
    assert.equal(await lastSettle(), cost, `${what}: streamed settles the provider's usage, not an estimate`);
  }
  await assertNothingHeld(org.orgId);
});

test('a managed flex win settles at the flex price (the hold was at the standard price)', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const c = clientFor(org.key);
  const { data, response } = await c.responses.create({ model: 'gpt-5.4-mini', input: `f ${sim({ flex_start_ms: 0, output_tokens: 30 })}`, start_within: '00h-00m-30s', include_cost: true } as any).withResponse();
  assert.equal(response.headers.get('x-service-flex-applied'), 'true');
  const u = data.usage as any;
  const flexCost = part(u.input_tokens, 375_000) + part(30, 2_250_000);
  assert.equal(u.cost.total_micro_usd, flexCost);
  assert.equal(Number(response.headers.get('x-service-cost')), flexCost);
  assert.equal(u.routing.mode, 'managed');
  const s = await assertNothingHeld(org.orgId);
  assert.equal(s.cashMicroUsd, 1_000_000 - flexCost);
});

test('cash first, then promo credit: each settlement\'s split is exact', async () => {
  const org = await t.newOrg();
  await t.admin('POST', `/admin/v1/orgs/${org.orgId}/topups`, { cash_micro_usd: 40, credit_micro_usd: 1_000 });
  const c = clientFor(org.key);
  const costs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const { response } = await c.responses.create({ model: 'gpt-5.4-mini', input: `q ${sim({ output_tokens: 5 })}`, start_within: 'now' } as any).withResponse();
    costs.push(Number(response.headers.get('x-service-cost')));
  }
  const total = costs.reduce((a, b) => a + b, 0);
  assert.ok(costs[0]! < 40 && costs[0]! + costs[1]! > 40, `the second request crosses from cash to credit (${costs})`);
  const s = await assertNothingHeld(org.orgId);
  assert.equal(s.cashMicroUsd, 0, 'cash never goes below zero while credit remains');
  assert.equal(s.creditMicroUsd, 1_000 - (total - 40));
  const split = settles((await ledgerOf(org.orgId)).entries).reverse().map((e) => [e.cash_micro_usd, e.credit_micro_usd]);
  assert.deepEqual(split, [[-costs[0]!, 0], [-(40 - costs[0]!), -(costs[1]! - (40 - costs[0]!))], [0, -costs[2]!]]);
});

// ── parallel admission ───────────────────────────────────────────────────────────────────────

test('30 parallel requests against a daily ceiling: exactly ⌈ceiling / hold⌉ admitted, each header what was left, money exact', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const body = mini({ output_tokens: 60, tokens_per_s: 20 }, { max_output_tokens: 1_000 }); // ~3 s each: none settles while the others are admitted
  const hold = holdOf(Buffer.byteLength(body), 1_000);
  const ceiling = 5 * hold + 1;                     // room for a 6th hold to start, not a 7th
  await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/overrides`, { daily_spend_micro_usd: ceiling, concurrency: 100 });

  const results = await Promise.all(Array.from({ length: 30 }, async () => {
    const res = await post(org.key, body);
    const json: any = await res.json();
    return { status: res.status, code: json.error?.code, remaining: res.headers.get('x-service-spend-remaining'), cost: Number(res.headers.get('x-service-cost') ?? 0) };
  }));
  const ok = results.filter((r) => r.status === 200);
  const refused = results.filter((r) => r.status !== 200);
  assert.equal(ok.length, Math.ceil(ceiling / hold));
  assert.equal(ok.length, 6);
  assert.ok(refused.every((r) => r.status === 429 && r.code === 'spend_velocity_exceeded' && r.remaining === null), JSON.stringify(refused[0]));
  assert.deepEqual(ok.map((r) => Number(r.remaining)).sort((a, b) => b - a), [0, 1, 2, 3, 4, 5].map((i) => ceiling - i * hold));

  const total = ok.reduce((a, r) => a + r.cost, 0);
  const s = await assertNothingHeld(org.orgId);
  assert.equal(s.cashMicroUsd, 10_000_000 - total);
  assert.equal(s.dailyUsedMicroUsd, total);
  assert.equal(s.pausedReason, 'spend_velocity_exceeded');
});

test('30 parallel requests against the concurrency limit and a balance smaller than one hold: exactly the limit admitted; the overspend is owed and pauses the next', async () => {
  const org = await t.newOrg({ balance: 500 });
  await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/overrides`, { concurrency: 5 });
  const body = mini({ output_tokens: 60, tokens_per_s: 20 }, { max_output_tokens: 1_000 });
  const results = await Promise.all(Array.from({ length: 30 }, async () => {
    const res = await post(org.key, body);
    const json: any = await res.json();
    return { status: res.status, code: json.error?.code, retryAfter: res.headers.get('retry-after'), remaining: res.headers.get('x-service-spend-remaining'), cost: Number(res.headers.get('x-service-cost') ?? 0) };
  }));
  const ok = results.filter((r) => r.status === 200);
  assert.equal(ok.length, 5);
  assert.ok(ok.every((r) => r.remaining === '500'), 'the balance (holds are not subtracted from it) is read at admission');
  assert.ok(results.filter((r) => r.status !== 200).every((r) => r.status === 429 && r.code === 'rate_limit_exceeded' && Number(r.retryAfter) >= 1));

  const total = ok.reduce((a, r) => a + r.cost, 0);
  assert.ok(total > 500);
  const s = await assertNothingHeld(org.orgId);
  assert.equal(s.cashMicroUsd, 500 - total);
  // The 429s stored no pause; the owed balance itself is shown as the pause the next request meets.
  assert.equal(s.pausedReason, 'insufficient_balance', 'the report shows the owed balance before the next request');
  const next = await post(org.key, mini({ output_tokens: 1 }));
  assert.equal(next.status, 402);
  assert.equal(((await next.json()) as any).error.code, 'insufficient_balance');
});

test('an output cap too large to hold is the caller\'s 400 invalid_request, not a 503 limits_unavailable', async () => {
  // The hold of max_output_tokens 1e16 (4.5e16 µUSD) is no safe integer: the ledger refuses the
  // amount, and the pipeline reported that as "the limits record cannot be read".
  const org = await t.newOrg({ balance: 1_000_000 });
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['/v1/responses', 'max_output_tokens', { model: 'gpt-5.4-mini', input: 'hi', start_within: 'now', max_output_tokens: 1e16 }],
    ['/v1/chat/completions', 'max_completion_tokens', { model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }], start_within: 'now', max_completion_tokens: 1e16 }],
    ['/v1/messages', 'max_tokens', { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }], start_within: 'now', max_tokens: 1e16 }],
  ];
  for (const [path, field, body] of cases) {
    const res = await post(org.key, JSON.stringify(body), undefined, path);
    const json: any = await res.json();
    const code = json.error?.code;
    assert.notEqual(code, 'limits_unavailable', `${path} ${field}: ${res.status} ${JSON.stringify(json)}`);
    assert.equal(res.status, 400, `${path} ${field}`);
    assert.equal(code, 'invalid_request', `${path} ${field}`);
  }
  await assertNothingHeld(org.orgId);
});

// ── no hold leaks ────────────────────────────────────────────────────────────────────────────

test('a client that disconnects mid-stream: upstream aborted, hold released, charged the estimate of what reached it', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const body = mini({ output_tokens: 400, tokens_per_s: 20 }, { stream: true });
  const aborted = t.gw.simulator!.stats.aborted;
  const ac = new AbortController();
  const res = await post(org.key, body, ac.signal);
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('output_text.delta')) text += new TextDecoder().decode((await reader.read()).value);
  const received = outputBytes(text);
  ac.abort();
  const started = Date.now();
  await waitFor(() => t.gw.simulator!.stats.aborted === aborted + 1, 'the upstream stream aborted');
  await assertNothingHeld(org.orgId);
  assert.ok(Date.now() - started < 5_000, 'released long before the 20 s stream would have ended');

  const [settle] = settles((await ledgerOf(org.orgId)).entries);
  const bytes = Buffer.byteLength(body);
  assert.ok(settle.amount_micro_usd >= unpricedEstimate(bytes, received), `at least the estimate of the ${received} bytes received (${settle.amount_micro_usd})`);
  assert.ok(settle.amount_micro_usd < unpricedEstimate(bytes, 400 * 200), 'far less than the whole answer');
  const output = settle.amount_micro_usd - part(Math.ceil(bytes / 4), MINI.input);
  assert.ok([...Array(400).keys()].some((k) => part(k + 1, MINI.output) === output), 'estimated input + whole output tokens');
});

test('a client that disconnects before commit is charged nothing', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const ac = new AbortController();
  const pending = post(org.key, mini({ standard_start_ms: 30_000 }), ac.signal).catch((e) => e);
  await waitFor(() => t.gw.services.inflight.size === 1, 'the request to wait for its upstream');
  ac.abort();
  await pending;
  const s = await assertNothingHeld(org.orgId);
  assert.equal(s.cashMicroUsd, 1_000_000);
  const [settle] = settles((await ledgerOf(org.orgId)).entries);
  assert.equal(settle.amount_micro_usd, 0);
});

test('an upstream reset mid-stream: the stream ends with an error event, hold released, charged the estimate of the bytes sent', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const body = mini({ output_tokens: 50, reset_after_tokens: 5 }, { stream: true });
  const res = await post(org.key, body);
  const text = await res.text();
  assert.match(text, /event: error\ndata: .*provider_error/);
  assert.doesNotMatch(text, /response\.completed/);
  await assertNothingHeld(org.orgId);
  const [settle] = settles((await ledgerOf(org.orgId)).entries);
  assert.equal(settle.amount_micro_usd, unpricedEstimate(Buffer.byteLength(body), outputBytes(beforeGatewayErrorFrame(text))));
  assert.ok(settle.amount_micro_usd > 0);
});

test('a stream that breaks after 200 tokens is charged an output estimate of 200 to 4 × 200 tokens, not below what the provider billed nor ten times it', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const body = mini({ output_tokens: 400, reset_after_tokens: 200 }, { stream: true });
  const text = await (await post(org.key, body)).text();
  assert.equal(text.match(/event: response\.output_text\.delta/g)?.length, 200);
  await assertNothingHeld(org.orgId);
  const [settle] = settles((await ledgerOf(org.orgId)).entries);
  const output = settle.amount_micro_usd - part(Math.ceil(Buffer.byteLength(body) / 4), MINI.input);
  const tokens = [...Array(4_096).keys()].find((k) => part(k + 1, MINI.output) === output)! + 1;
  assert.ok(tokens >= 200 && tokens <= 800, `estimated ${tokens} output tokens`);
});

test('an in-stream provider error: hold released, charged the estimate of the bytes sent', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const body = mini({ output_tokens: 50, error_after_tokens: 4 }, { stream: true });
  const res = await post(org.key, body);
  const text = await res.text();
  assert.match(text, /event: error/);
  // The provider's own error event ends the stream: every byte the caller got is the provider's.
  assert.doesNotMatch(text, /The provider stream failed/);
  await assertNothingHeld(org.orgId);
  const [settle] = settles((await ledgerOf(org.orgId)).entries);
  assert.equal(settle.amount_micro_usd, unpricedEstimate(Buffer.byteLength(body), outputBytes(text)));
});

test('an upstream failure before commit (no retry): 502 provider_error, hold released, charged nothing', async () => {
  const org = await t.newOrg({ balance: 1_000_000 });
  const c = clientFor(org.key);
  for (const [i, stream] of [[1, false], [2, true]] as const) {
    await assert.rejects(
      c.responses.create({ model: 'gpt-5.4-mini', input: `x ${sim({ fail: [500], id: `money-fail-${i}` })}`, start_within: 'now', stream } as any),
      (err: any) => err.status === 502 && err.code === 'provider_error',
    );
  }
  // ...and with a retry that fails too (the backoff runs on the simulated clock: move it)
  const sent = t.gw.simulator!.stats.requests;
  const retried = c.responses.create({ model: 'gpt-5.4-mini', input: `x ${sim({ fail: [503, 503], id: 'money-fail-3' })}`, start_within: 'now', retry: { count: 1, jitter: false } } as any);
  await waitFor(() => t.gw.simulator!.stats.requests === sent + 1, 'the first attempt');
  await new Promise((r) => setTimeout(r, 20));
  t.clock!.increment(60_000);
  await assert.rejects(retried, (err: any) => err.status === 502 && err.headers.get('x-service-retries') === '1');
  const s = await assertNothingHeld(org.orgId);
  assert.equal(s.cashMicroUsd, 1_000_000);
  assert.equal(s.dailyUsedMicroUsd, 0);
  const all = settles((await ledgerOf(org.orgId)).entries);
  assert.equal(all.length, 3);
  assert.ok(all.every((e) => e.amount_micro_usd === 0));
});

test('a broken translated stream is charged by the provider\'s bytes, as a passthrough of the same upstream is, and its input as the provider reported it', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const directive = sim({ output_tokens: 600, reset_after_tokens: 300 });
  const charges: Record<string, number> = {};
  const streams: Record<string, string> = {};
  for (const [path, body] of [
    ['/v1/messages', { max_tokens: 4_096, messages: [{ role: 'user', content: `hello ${directive}` }] }],
    ['/v1/chat/completions', { max_tokens: 4_096, messages: [{ role: 'user', content: `hello ${directive}` }] }],
    ['/v1/responses', { max_output_tokens: 4_096, input: `hello ${directive}` }],
  ] as const) {
    const before = (await ledgerOf(org.orgId)).snapshot.cashMicroUsd;
    streams[path] = await (await post(org.key, JSON.stringify({ model: 'claude-haiku-4-5', start_within: 'now', stream: true, ...body }), undefined, path)).text();
    charges[path] = before - (await assertNothingHeld(org.orgId)).cashMicroUsd;
  }
  assert.match(streams['/v1/messages']!, /The provider stream failed/);
  // The same upstream bytes stand behind each caller's stream: the same charge, whatever the
  // caller's format makes of them (a Chat stream is 2–3 times the bytes of the Messages one).
  assert.ok(Buffer.byteLength(streams['/v1/chat/completions']!) > 1.5 * Buffer.byteLength(streams['/v1/messages']!));
  assert.equal(charges['/v1/chat/completions'], charges['/v1/messages'], JSON.stringify(charges));
  assert.equal(charges['/v1/responses'], charges['/v1/messages'], JSON.stringify(charges));
  // The input as message_start reported it (not the request's bytes / 4), the output as the
  // Anthropic wire's bytes hold at most (12 a token).
  const text = streams['/v1/messages']!;
  const input = Number(/"input_tokens":(\d+)/.exec(text)![1]);
  const output = Math.ceil(outputBytes(text.slice(0, text.lastIndexOf('event: error\n'))) / 12);
  assert.equal(charges['/v1/messages'], part(input, 1_000_000) + part(output, 5_000_000), 'claude-haiku-4-5: $1 / $5 per million');
});

test('while a translated stream runs, its delivered cost (what a crash is charged) follows the provider\'s bytes, not the caller\'s longer ones', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const body = JSON.stringify({
    model: 'claude-haiku-4-5', start_within: 'now', stream: true, max_tokens: 4_096,
    messages: [{ role: 'user', content: `hello ${sim({ output_tokens: 2_000, tokens_per_s: 40 })}` }],
  });
  const ac = new AbortController();
  const res = await post(org.key, body, ac.signal, '/v1/chat/completions');
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  while (text.split('"delta":{"content"').length <= 40) text += dec.decode((await reader.read()).value);
  const [entry] = [...t.gw.services.inflight];
  const delivered = entry!.delivered!();
  ac.abort();
  await assertNothingHeld(org.orgId);
  // claude-haiku-4-5: $1 / $5 per million; the input is the request's estimate; the output is
  // what the delivered bytes hold at 12 a token (the Anthropic wire's), so the bytes it implies:
  const outputPart = delivered - part(Math.ceil(Buffer.byteLength(body) / 4), 1_000_000);
  const impliedBytes = (outputPart / 5) * 12;
  // Counted in the caller's Chat chunks (before), they were at least what the client read; the
  // provider's Messages events behind them are well under half of it.
  const read = Buffer.byteLength(text);
  assert.ok(impliedBytes < 0.75 * read, `delivered ${delivered} µUSD implies ${impliedBytes} bytes; the client read ${read}`);
  assert.ok(impliedBytes > 0.2 * read, `delivered ${delivered} µUSD implies ${impliedBytes} bytes; the client read ${read}`);
});

test('a request that names no output cap holds what its route may generate: the default cap plus an Anthropic thinking budget its effort turns on', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const body = JSON.stringify({
    model: 'claude-haiku-4-5', start_within: 'now', stream: true, reasoning_effort: 'high',
    messages: [{ role: 'user', content: `hello ${sim({ output_tokens: 200, tokens_per_s: 50 })}` }],
  });
  const ac = new AbortController();
  const res = await post(org.key, body, ac.signal, '/v1/chat/completions');
  assert.equal(res.status, 200);
  const { snapshot } = await ledgerOf(org.orgId);
  ac.abort();
  await assertNothingHeld(org.orgId);
  // claude-haiku-4-5: $1 / $5 per million; 4,096 (hold.default_max_output_tokens) + 16,384 (high).
  assert.equal(snapshot.reservedMicroUsd, part(Math.ceil(Buffer.byteLength(body) / 4), 1_000_000) + part(4_096 + 16_384, 5_000_000));
});

test("the service account's own refusals (401, 403) on a managed route are a provider failure, without its words; an own key's are the caller's", async () => {
  const managed = await t.newOrg({ balance: 1_000_000 });
  for (const status of [401, 403]) {
    const res = await post(managed.key, mini({ fail: [status], id: `managed-${status}` }));
    const body = await res.json() as any;
    assert.equal(res.status, 502, JSON.stringify(body));
    assert.equal(body.error.code, 'provider_error');
    assert.equal(body.error.message, `The provider failed (${status}).`);
  }
  await assertNothingHeld(managed.orgId);
  const own = await t.newOrg({ ownKeys: ['vendor_a'] });
  const res = await post(own.key, mini({ fail: [401], id: 'own-401' }));
  const body = await res.json() as any;
  assert.equal(res.status, 401);
  assert.equal(body.error.code, 'provider_rejected');
  assert.match(body.error.message, /invalid credentials/i);
});
