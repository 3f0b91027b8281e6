// The flex race end to end under injected time: the gateway's clock and timers are xstate's
// SimulatedClock, so the hedge and backoff fire exactly when the test moves time; the simulator's
// own delays script which tier can start.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, waitFor, sim, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
let client: OpenAI;
const stats = () => t.gw.simulator!.stats;
const flush = () => new Promise((r) => setTimeout(r, 20));

before(async () => {
  t = await startTestGateway({ simulatedTime: true, config: { hedge: { initial_lead_ms: 2_000, min_lead_ms: 2_000, max_lead_ms: 2_000 } } });
  const org = await t.newOrg({ ownKeys: ['vendor_a'] });
  client = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
});
after(() => t.close());

test('flex starts within the budget: flex_committed, standard never sent', async () => {
  const before = stats().requests;
  const { data, response } = await client.responses.create({ model: 'gpt-5.4', input: sim({ flex_start_ms: 0 }), start_within: '00h-00m-10s' } as any).withResponse();
  assert.equal((data as any).service_tier, 'flex');
  assert.equal(response.headers.get('x-service-flex-applied'), 'true');
  assert.equal(response.headers.get('x-service-flex-reason'), 'flex_committed');
  assert.equal(stats().requests - before, 1);
});

test('flex too slow: the standard hedge goes out at deadline − lead, starts before the deadline, flex is aborted', async () => {
  const before = { requests: stats().requests, aborted: stats().aborted };
  const pending = client.responses.create({ model: 'gpt-5.4', input: sim({ flex_start_ms: 600_000 }), start_within: '00h-00m-10s' } as any).withResponse();
  await waitFor(() => stats().requests === before.requests + 1, 'the flex attempt');
  t.clock!.increment(7_999);
  await flush();
  assert.equal(stats().requests, before.requests + 1, 'no standard attempt before deadline − lead');
  t.clock!.increment(1);
  const { data, response } = await pending;
  assert.equal(stats().requests, before.requests + 2);
  assert.equal(response.headers.get('x-service-flex-applied'), 'false');
  assert.equal(response.headers.get('x-service-flex-reason'), 'flex_lost_race');
  assert.equal((data as any).service_tier, 'default');
  await waitFor(() => stats().aborted === before.aborted + 1, 'the losing flex attempt to be aborted upstream');
});

test('flex refused for capacity: standard at once, no waiting for the deadline', async () => {
  const before = stats().requests;
  const { response } = await client.responses.create({ model: 'gpt-5.4', input: sim({ flex_refuse: true }), start_within: '00h-05m-00s' } as any).withResponse();
  assert.equal(response.headers.get('x-service-flex-reason'), 'flex_unavailable');
  assert.equal(response.headers.get('x-service-flex-applied'), 'false');
  assert.equal(stats().requests - before, 2);
});

test('retries honour Retry-After and are counted in x-service-retries', async () => {
  const before = stats().requests;
  const pending = client.responses.create({
    model: 'gpt-5.4', input: sim({ fail: [429], retry_after_s: 3, id: 'retry-1' }), start_within: 'now', retry: { count: 2 },
  } as any).withResponse();
  await waitFor(() => stats().requests === before + 1, 'the first attempt');
  await flush();
  t.clock!.increment(2_999);
  await flush();
  assert.equal(stats().requests, before + 1, 'not retried sooner than Retry-After');
  t.clock!.increment(1);
  const { response } = await pending;
  assert.equal(stats().requests, before + 2);
  assert.equal(response.headers.get('x-service-retries'), '1');
});

test('a provider asking for a wait longer than the deadline allows is not waited for: the caller gets 502 with its Retry-After', async () => {
  const before = stats().requests;
  await assert.rejects(
    client.responses.create({
      model: 'gpt-5.4', input: sim({ fail: [429, 429], retry_after_s: 600, id: 'retry-long' }), start_within: 'now', retry: { count: 2 },
    } as any),
    (err: any) => err.status === 502 && err.code === 'provider_error' && err.headers.get('retry-after') === '600',
  );
  assert.equal(stats().requests, before + 1, 'one attempt, no retry scheduled ten minutes out');
});

test('without retry a transient failure is the caller\'s 502 provider_error, with routing headers', async () => {
  await assert.rejects(
    client.responses.create({ model: 'gpt-5.4', input: sim({ fail: [503], id: 'no-retry-1' }), start_within: 'now' } as any),
    (err: any) => err.status === 502 && err.code === 'provider_error' && err.headers.get('x-service-served-provider') === 'vendor_a',
  );
});

test('a race where flex and standard both fail says flex_unavailable, not flex_committed, in its header and usage record', async () => {
  let headers: Headers | undefined;
  await assert.rejects(
    client.responses.create({ model: 'gpt-5.4', input: sim({ fail: [500, 500], id: 'race-all-fail' }), start_within: '00h-00m-10s' } as any),
    (err: any) => { headers = err.headers; return err.status === 502; },
  );
  assert.equal(headers!.get('x-service-flex-reason'), 'flex_unavailable');
  assert.equal(headers!.get('x-service-flex-applied'), 'false');
});

test('a caller that leaves while flex and the hedge are racing: both aborted upstream, the record says abandoned (not flex_unavailable), 499', async () => {
  const before = { requests: stats().requests, aborted: stats().aborted };
  const from = t.logLines.length;
  const ac = new AbortController();
  const pending = client.responses.create(
    { model: 'gpt-5.4', input: sim({ flex_start_ms: 600_000, standard_start_ms: 600_000 }), start_within: '00h-00m-10s' } as any,
    { signal: ac.signal },
  );
  await waitFor(() => stats().requests === before.requests + 1, 'the flex attempt');
  t.clock!.increment(8_000);
  await waitFor(() => stats().requests === before.requests + 2, 'the standard hedge');
  ac.abort();
  await assert.rejects(pending);
  await waitFor(() => stats().aborted === before.aborted + 2, 'both attempts aborted upstream');
  await waitFor(() => t.gw.services.inflight.size === 0, 'idle');
  const line = t.logLines.slice(from).map((l) => JSON.parse(l)).find((l) => l.req && 'status' in l);
  assert.deepEqual([line.status, line.msg, line.reason], [499, 'client_closed_request', 'abandoned']);
  await t.gw.services.usage.flush();
  const res = await fetch(`${t.url}/v1/usage/requests?limit=100`, { headers: { authorization: `Bearer ${(client as any).apiKey}` } });
  const record = ((await res.json()) as any).data.find((r: any) => r.id === line.req);
  assert.deepEqual([record.reason, record.client_closed, record.tier], ['abandoned', true, null]);
});

test('flex race slots per organization: past the limit the request runs standard (flex_slots_full)', async () => {
  const t2 = await startTestGateway({ config: { flex_race_slots: 1 } });
  try {
    const org = await t2.newOrg({ ownKeys: ['vendor_a'] });
    const c2 = new OpenAI({ apiKey: org.key, baseURL: `${t2.url}/v1`, maxRetries: 0 });
    const slow = c2.responses.create({ model: 'gpt-5.4', input: sim({ flex_start_ms: 300 }), start_within: '00h-00m-30s' } as any).withResponse();
    await waitFor(() => t2.gw.simulator!.stats.requests === 1, 'the first race');
    const { response } = await c2.responses.create({ model: 'gpt-5.4', input: sim({ flex_start_ms: 0 }), start_within: '00h-00m-30s' } as any).withResponse();
    assert.equal(response.headers.get('x-service-flex-reason'), 'flex_slots_full');
    assert.equal(response.headers.get('x-service-flex-applied'), 'false');
    assert.equal((await slow).response.headers.get('x-service-flex-reason'), 'flex_committed');
  } finally { await t2.close(); }
});

test('a race slot is freed at commit: the org races again while the first answer still streams', async () => {
  const t2 = await startTestGateway({ config: { flex_race_slots: 1 } });
  try {
    const org = await t2.newOrg({ ownKeys: ['vendor_a'] });
    const c2 = new OpenAI({ apiKey: org.key, baseURL: `${t2.url}/v1`, maxRetries: 0 });
    const { data: first, response: head } = await c2.responses.create({
      model: 'gpt-5.4', input: sim({ flex_start_ms: 0, output_tokens: 200, tokens_per_s: 40 }), start_within: '00h-00m-30s', stream: true,
    } as any).withResponse();
    assert.equal(head.headers.get('x-service-flex-reason'), 'flex_committed');
    const events = (first as any)[Symbol.asyncIterator]();
    await events.next(); // streaming: 200 tokens at 40 a second
    const { response } = await c2.responses.create({ model: 'gpt-5.4', input: sim({ flex_start_ms: 0 }), start_within: '00h-00m-30s' } as any).withResponse();
    assert.equal(response.headers.get('x-service-flex-reason'), 'flex_committed', 'raced, not flex_slots_full');
    (first as any).controller.abort();
  } finally { await t2.close(); }
});

test('a client that disconnects aborts the upstream attempt at once (before and after commit)', async () => {
  const before = stats().aborted;
  const ac = new AbortController();
  const waiting = client.responses.create({ model: 'gpt-5.4', input: sim({ flex_start_ms: 600_000 }), start_within: '00h-00m-30s' } as any, { signal: ac.signal });
  await waitFor(() => t.gw.services.inflight.size === 1, 'the request to be racing');
  await flush();
  ac.abort();
  await assert.rejects(waiting);
  await waitFor(() => stats().aborted === before + 1, 'the flex attempt aborted upstream');
  await waitFor(() => t.gw.services.inflight.size === 0, 'the request to end');

  const ac2 = new AbortController();
  const stream: any = await client.responses.create({ model: 'gpt-5.4', input: sim({ output_tokens: 400, tokens_per_s: 20 }), start_within: 'now', stream: true } as any, { signal: ac2.signal });
  for await (const ev of stream) { if (ev.type === 'response.output_text.delta') break; }
  ac2.abort();
  await waitFor(() => stats().aborted === before + 2, 'the streaming attempt aborted upstream');
  await waitFor(() => t.gw.services.inflight.size === 0, 'the request to end');
});

test('a mid-stream upstream reset ends the stream with the format\'s error event', async () => {
  const stream: any = await client.responses.create({ model: 'gpt-5.4', input: sim({ output_tokens: 50, reset_after_tokens: 5 }), start_within: 'now', stream: true } as any);
  let deltas = 0;
  await assert.rejects(async () => { for await (const ev of stream) if (ev.type === 'response.output_text.delta') deltas++; }, (err: any) => /provider stream failed/.test(err.message));
  assert.ok(deltas >= 1);
});

test('a stream whose head goes out before commit carries the spend figure: unlimited on own keys, the balance as admitted on the managed balance', async () => {
  const g = await startTestGateway({ simulatedTime: true, config: { hedge: { initial_lead_ms: 2_000, min_lead_ms: 2_000, max_lead_ms: 2_000 } } });
  try {
    const own = await g.newOrg({ ownKeys: ['vendor_a'] });
    const managed = await g.newOrg({ balance: 10_000_000 });
    const admittedAt = g.clock!.now();
    const send = (key: string) => fetch(`${g.url}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4', input: sim({ flex_start_ms: 600_000 }), stream: true, start_within: '00h-10m-00s' }),
    });
    const requests = () => g.gw.simulator!.stats.requests;
    const pending = [send(own.key), send(managed.key)];
    await waitFor(() => requests() === 2, 'both flex attempts');
    g.clock!.increment(240_000);               // stream_head_ms: both heads go out before commit
    const [a, b] = await Promise.all(pending);
    assert.equal(b.headers.get('x-service-served-provider'), null, 'the head went out before commit');
    assert.equal(a.headers.get('x-service-spend-remaining'), 'unlimited');
    assert.equal(a.headers.get('x-service-spend-as-of'), null);
    assert.equal(b.headers.get('x-service-spend-remaining'), '10000000');
    assert.equal(b.headers.get('x-service-spend-as-of'), String(admittedAt));
    await Promise.all([a.body!.cancel(), b.body!.cancel()]);
  } finally {
    await g.close();
  }
});

test('a stream that waits past stream_head_ms gets its 200 and event-stream head at once, comment lines while it waits, then the provider\'s events', async () => {
  const g = await startTestGateway({ simulatedTime: true, config: { hedge: { initial_lead_ms: 2_000, min_lead_ms: 2_000, max_lead_ms: 2_000 } } });
  try {
    const org = await g.newOrg({ ownKeys: ['vendor_a'] });
    const send = (directive: Record<string, unknown>) => fetch(`${g.url}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4', input: sim(directive), stream: true, start_within: '00h-10m-00s' }),
    });
    const requests = () => g.gw.simulator!.stats.requests;
    let head = false;
    const pending = send({ flex_start_ms: 600_000 }).then((r) => { head = true; return r; });
    await waitFor(() => requests() === 1, 'the flex attempt');
    g.clock!.increment(239_999);
    await flush();
    assert.equal(head, false, 'no head before stream_head_ms');
    g.clock!.increment(1);
    const res = await pending;
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(res.headers.get('x-accel-buffering'), 'no', 'nginx passes the waiting stream unbuffered');
    assert.ok(res.headers.get('x-request-id'));
    g.clock!.increment(30_000);              // two keep-alive comments
    await flush();
    g.clock!.increment(600_000 - 2_000 - 270_000);   // the hedge: standard starts and commits
    const text = await res.text();
    assert.equal(requests(), 2);
    assert.equal(text.match(/^: /gm)?.length, 3, 'the first comment and two keep-alives, then nothing');
    assert.match(text, /^: waiting for the provider to start/);
    assert.match(text, /event: response\.completed/);
    // Every SSE parser skips the comments: the SDK reads the same events as without them.
    const events = text.split('\n').filter((l) => l.startsWith('event: ')).map((l) => l.slice(7));
    assert.equal(events.at(-1), 'response.completed');

  } finally {
    await g.close();
  }
});
