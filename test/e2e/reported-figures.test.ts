// What an organization is told it spent agrees with what it was charged: a Messages passthrough
// that breaks mid-stream is charged the estimate of what reached the caller (not the 1 output token
// message_start reports), a settlement and its usage record land on the same UTC day, and the usage
// queue's depth gauge reads the records waiting.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, waitFor, sim, type TestGateway } from '../helpers/gateway.ts';
import { createLogger } from '../../lib/log.ts';
import { UsageQueue } from '../../lib/usage/queue.ts';
import { createMetrics } from '../../lib/metrics.ts';
import type { UsageStore } from '../../lib/usage/store.ts';
import type { RequestEnd } from '../../lib/usage/record.ts';

let t: TestGateway;
before(async () => { t = await startTestGateway({ simulatedTime: true }); });
after(() => t.close());

const post = (key: string, path: string, body: unknown): Promise<Response> =>
  fetch(`${t.url}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });

async function settleOf(orgId: string): Promise<number> {
  await waitFor(() => t.gw.services.inflight.size === 0, 'idle');
  const r = await t.admin('GET', `/admin/v1/orgs/${orgId}/ledger`);
  return r.json.entries.find((e: any) => e.kind === 'settle').amount_micro_usd;
}

test('a managed Messages stream that breaks after 200 tokens is charged at least those 200 tokens, as an estimate', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const res = await post(org.key, '/v1/messages', {
    model: 'claude-haiku-4-5', max_tokens: 1000, stream: true, start_within: 'now',
    messages: [{ role: 'user', content: `m ${sim({ output_tokens: 400, reset_after_tokens: 200 })}` }],
  });
  const text = await res.text();
  assert.equal(text.match(/event: content_block_delta/g)?.length, 200);
  const charged = await settleOf(org.orgId);
  await t.gw.services.usage.flush();
  const record = (await (await fetch(`${t.url}/v1/usage/requests`, { headers: { authorization: `Bearer ${org.key}` } })).json() as any).data[0];
  const price = t.gw.services.catalog.get('claude-haiku-4-5')!.prices.standard;
  assert.ok(charged >= Math.ceil((200 * price.output) / 1e6), `charged ${charged}`);
  assert.ok(record.output_tokens >= 200, `recorded ${record.output_tokens} output tokens`);
  assert.equal(record.usage_estimated, true);
});

test('a settlement at 23:59:59.995 that takes 10 ms and its usage record land on the same UTC day', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const ledger = t.gw.services.ledger as { settle: (...args: unknown[]) => Promise<unknown> };
  const settle = ledger.settle;
  ledger.settle = async (...args) => { const r = await settle.apply(ledger, args); t.clock!.increment(10); return r; };
  try {
    t.clock!.set(Date.UTC(2026, 10, 21, 23, 59, 59, 995));
    const res = await post(org.key, '/v1/responses', { model: 'gpt-5.4-mini', input: `x ${sim({ output_tokens: 5 })}`, start_within: 'now' });
    await res.text();
    await waitFor(() => t.gw.services.inflight.size === 0, 'idle');
  } finally {
    ledger.settle = settle;
  }
  await t.gw.services.usage.flush();
  const entries = (await t.admin('GET', `/admin/v1/orgs/${org.orgId}/ledger`)).json.entries;
  const settled = entries.find((e: any) => e.kind === 'settle');
  const usage = await (await fetch(`${t.url}/v1/usage?group_by=day&from=2026-11-21&to=2026-11-22`, { headers: { authorization: `Bearer ${org.key}` } })).json() as any;
  const byDay = Object.fromEntries(usage.data.map((g: any) => [g.day, g.managed_cost_micro_usd]));
  assert.ok(settled.amount_micro_usd > 0);
  assert.equal(byDay['2026-11-21'] ?? 0, settled.amount_micro_usd, 'the record is on the settlement\'s day');
});

const end = (i: number): RequestEnd => ({
  id: `req-${i}`, orgId: 'o', keyId: 'k', startedAt: 0, endedAt: 10, format: 'responses', model: 'gpt-5.4',
  status: 200, errorCode: null, costMicroUsd: i, clientClosed: false,
} as RequestEnd);

test('the usage queue depth gauge reads the records waiting, also behind a slow store with the queue full', async () => {
  const metrics = createMetrics();
  const read = async (name: string): Promise<number> => (await metrics.registry.getSingleMetric(name)!.get()).values[0]?.value ?? 0;
  let release!: () => void;
  const stuck = new Promise<void>((r) => { release = r; });
  const store = { insert: () => stuck } as unknown as UsageStore;
  const log = createLogger('error', new Writable({ write(_c, _e, cb) { cb(); } }));
  const queue = new UsageQueue(store, { capacity: 10, batchSize: 5, flushIntervalMs: 3_600_000 },
    { dropped: metrics.usageDropped, written: metrics.usageWritten, depth: metrics.usageQueueDepth }, log);
  for (let i = 0; i < 3; i++) queue.push(end(i));
  assert.equal(await read('gateway_usage_queue_depth'), 3);
  void queue.flush();                                   // the first 3 go to the stuck store
  for (let i = 3; i < 20; i++) queue.push(end(i));      // 10 fit, 7 dropped
  await new Promise((r) => setImmediate(r));
  assert.equal(await read('gateway_usage_queue_depth'), 10);
  assert.equal(await read('gateway_usage_records_dropped_total'), 7);
  release();
  await queue.close();
});

test('include_cost on a Messages stream: the usage frame carries input_tokens beside the cost, passthrough as translated', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const deltaUsage = async (model: string): Promise<any> => {
    const text = await (await post(org.key, '/v1/messages', {
      model, max_tokens: 100, stream: true, include_cost: true, start_within: 'now',
      messages: [{ role: 'user', content: `hi ${sim({ output_tokens: 5 })}` }],
    })).text();
    const line = text.split('\n').find((l) => l.startsWith('data: ') && l.includes('"message_delta"'))!;
    return JSON.parse(line.slice(6)).usage;
  };
  for (const model of ['claude-haiku-4-5', 'gpt-5.4-mini']) {
    const usage = await deltaUsage(model);
    assert.equal(typeof usage.input_tokens, 'number', model);
    assert.ok(usage.input_tokens > 0, model);
    assert.equal(usage.output_tokens, 5, model);
    assert.equal(typeof usage.cost.total_micro_usd, 'number', model);
  }
});

test('a non-streamed answer reports usage.cost without include_cost, equal to x-service-cost, in every caller format; the routing block stays include_cost\'s', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const user = `hi ${sim({ output_tokens: 7 })}`;
  const bodies: Array<[string, string, Record<string, unknown>]> = [
    ['/v1/responses', 'gpt-5.4-mini', { input: user }],                                          // passthrough
    ['/v1/responses', 'claude-haiku-4-5', { input: user }],                                      // translated
    ['/v1/chat/completions', 'gpt-5.4-mini', { messages: [{ role: 'user', content: user }] }],
    ['/v1/messages', 'claude-haiku-4-5', { max_tokens: 100, messages: [{ role: 'user', content: user }] }],
    ['/v1/messages', 'gpt-5.4-mini', { max_tokens: 100, messages: [{ role: 'user', content: user }] }],
    ['/v1/interactions', 'gemini-3.5-flash', { input: user }],
  ];
  for (const [path, model, body] of bodies) {
    const res = await post(org.key, path, { model, start_within: 'now', ...body });
    const text = await res.text();
    assert.equal(res.status, 200, `${path} ${model}: ${text}`);
    const json = JSON.parse(text);
    const cost = Number(res.headers.get('x-service-cost'));
    assert.ok(cost > 0, `${path} ${model}`);
    assert.deepEqual(json.usage.cost, { total_micro_usd: cost, currency: 'USD' }, `${path} ${model}`);
    assert.equal(json.usage.routing, undefined, `${path} ${model}: routing only with include_cost`);
  }
});

test('the Anthropic SDK reads the gateway\'s request id (it looks only at request-id), streamed and not', async () => {
  const org = await t.newOrg({ balance: 10_000_000 });
  const client = new Anthropic({ apiKey: null, authToken: org.key, baseURL: t.url, maxRetries: 0 });
  const body = { model: 'claude-haiku-4-5', max_tokens: 50, start_within: 'now', messages: [{ role: 'user' as const, content: `hi ${sim({ output_tokens: 3 })}` }] };
  const { data, response } = await client.messages.create(body as any).withResponse();
  assert.match((data as any)._request_id ?? '', /^[0-9a-f-]{36}$/);
  assert.equal((data as any)._request_id, response.headers.get('x-request-id'));
  const stream = client.messages.stream(body as any);
  await stream.finalMessage();
  assert.equal(stream.request_id, (await stream.withResponse()).response.headers.get('x-request-id'));
  assert.ok(stream.request_id);
});
