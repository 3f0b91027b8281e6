// The usage API end to end: every request leaves one record with the right route, tier, reason,
// tokens and exact cost (flex savings = the same tokens at the standard price); aggregates by
// every dimension as JSON and CSV; cursor pages; 400 codes; one organization never sees another's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { costOf } from '../../lib/catalog/catalog.ts';

let t: TestGateway;
let a: { orgId: string; key: string; keyId: string };
let b: { orgId: string; key: string; keyId: string };
const ids: string[] = [];   // request ids of org A, in order sent

const ajv = new Ajv({ strict: false, allErrors: true });
const schema = (f: string) => ajv.compile<any>(JSON.parse(readFileSync(new URL(`../../schemas/${f}`, import.meta.url), 'utf8')));
const reportSchema = schema('usage-report.json');
const requestsSchema = schema('usage-requests.json');

const get = async (key: string, path: string, accept?: string): Promise<{ status: number; json: any; text: string; type: string | null }> => {
  const res = await fetch(t.url + path, { headers: { authorization: `Bearer ${key}`, ...(accept ? { accept } : {}) } });
  const text = await res.text();
  let json: any;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, json, text, type: res.headers.get('content-type') };
};

/** gpt-5.4 prices (micro-USD per 1M tokens) from the catalog the gateway uses. */
const prices = () => t.gw.services.catalog.get('gpt-5.4')!.prices;

before(async () => {
  t = await startTestGateway();
  a = await t.newOrg({ balance: 50_000_000 });
  b = await t.newOrg({ balance: 50_000_000 });
  const oa = new OpenAI({ apiKey: a.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  // 1. flex wins at once (flex_committed), streamed with cost
  const s = await oa.responses.create({ model: 'gpt-5.4', input: `one ${sim({ flex_start_ms: 0, output_tokens: 40 })}`, start_within: '00h-00m-30s', stream: true, include_cost: true } as any).withResponse();
  ids.push(s.response.headers.get('x-request-id')!);
  for await (const _ of s.data as any) { /* drain */ }
  // 2. standard at once, non-streamed
  const n = await oa.responses.create({ model: 'gpt-5.4', input: `two ${sim({ output_tokens: 12 })}`, start_within: 'now' } as any).withResponse();
  ids.push(n.response.headers.get('x-request-id')!);
  // 3. a Messages request (vendor_c)
  const an = new Anthropic({ authToken: a.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  const m = await an.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: `three ${sim({ output_tokens: 7 })}` }], start_within: 'now' } as any).withResponse();
  ids.push(m.response.headers.get('x-request-id')!);
  // 4. refused after authentication: missing start_within
  const bad = await fetch(`${t.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-5.4', input: 'x' }) });
  assert.equal(bad.status, 400);
  ids.push(bad.headers.get('x-request-id')!);
  // org B: one request
  const ob = new OpenAI({ apiKey: b.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  await ob.responses.create({ model: 'gpt-5.4-mini', input: `b ${sim({ output_tokens: 3 })}`, start_within: 'now' } as any);
  await t.gw.services.usage.flush();
});
after(() => t.close());

test('each request leaves one record: route, tier, reason, tokens, exact cost and standard-equivalent', async () => {
  const r = await get(a.key, '/v1/usage/requests');
  assert.equal(r.status, 200);
  assert.ok(requestsSchema(r.json), JSON.stringify(requestsSchema.errors));
  assert.deepEqual(r.json.data.map((x: any) => x.id), [...ids].reverse(), 'newest first, one per request, only org A');
  const [refused, msg, now, flex] = r.json.data;

  assert.equal(flex.tier, 'flex');
  assert.equal(flex.reason, 'flex_committed');
  assert.equal(flex.served_route, 'vendor_a');
  assert.equal(flex.requested_route, 'vendor_a');
  assert.equal(flex.key_mode, 'managed');
  assert.equal(flex.format, 'responses');
  assert.equal(flex.output_tokens, 40);
  assert.equal(flex.deadline_met, true);
  assert.equal(flex.client_closed, false);
  assert.equal(flex.status, 200);
  const usage = { inputTokens: flex.input_tokens, cachedInputTokens: flex.cached_input_tokens, cacheWriteTokens: flex.cache_write_tokens, outputTokens: flex.output_tokens, reasoningTokens: 0 };
  assert.equal(flex.cost_micro_usd, costOf(prices().flex!, usage));
  assert.equal(flex.standard_cost_micro_usd, costOf(prices().standard, usage));
  assert.ok(flex.savings_micro_usd > 0);
  assert.equal(flex.savings_micro_usd, flex.standard_cost_micro_usd - flex.cost_micro_usd);
  assert.ok(flex.time_to_commit_ms >= 0 && flex.time_to_commit_ms <= flex.duration_ms);

  assert.equal(now.tier, 'standard');
  assert.equal(now.reason, 'standard_requested');
  assert.equal(now.deadline_met, null, '"now" has no deadline to meet');
  assert.equal(now.cost_micro_usd, now.standard_cost_micro_usd);
  assert.equal(now.savings_micro_usd, 0);

  assert.equal(msg.format, 'messages');
  assert.equal(msg.model, 'claude-haiku-4-5');
  assert.equal(msg.served_route, 'vendor_c');
  assert.equal(msg.output_tokens, 7);

  assert.equal(refused.status, 400);
  assert.equal(refused.error_code, 'missing_start_within');
  assert.equal(refused.cost_micro_usd, 0);
  assert.equal(refused.served_route, null);
  assert.equal(refused.key_id, a.keyId);
});

test('the flex record\'s cost equals what the stream reported in usage.cost', async () => {
  const oa = new OpenAI({ apiKey: a.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const { data, response } = await oa.responses.create({ model: 'gpt-5.4', input: `cost ${sim({ flex_start_ms: 0, output_tokens: 21 })}`, start_within: '00h-00m-30s', include_cost: true } as any).withResponse();
  await t.gw.services.usage.flush();
  const id = response.headers.get('x-request-id');
  const r = await get(a.key, '/v1/usage/requests?limit=1');
  assert.equal(r.json.data[0].id, id);
  assert.equal(r.json.data[0].cost_micro_usd, (data.usage as any).cost.total_micro_usd);
  assert.equal(String(r.json.data[0].cost_micro_usd), response.headers.get('x-service-cost'));
  ids.push(id!);
});

test('GET /v1/usage: totals and groups by every dimension, sums consistent, JSON schema', async () => {
  const all = await get(a.key, '/v1/usage');
  assert.equal(all.status, 200);
  assert.ok(reportSchema(all.json), JSON.stringify(reportSchema.errors));
  const list = (await get(a.key, '/v1/usage/requests?limit=200')).json.data;
  const sum = (k: string) => list.reduce((s: number, x: any) => s + x[k], 0);
  const tot = all.json.totals;
  assert.equal(tot.requests, list.length);
  assert.equal(tot.cost_micro_usd, sum('cost_micro_usd'));
  assert.equal(tot.standard_cost_micro_usd, sum('standard_cost_micro_usd'));
  assert.equal(tot.savings_micro_usd, sum('savings_micro_usd'));
  assert.equal(tot.errors, 1);
  assert.equal(tot.served_requests, list.length - 1);
  assert.equal(tot.flex_requests, 2);
  assert.equal(tot.flex_share, Math.round((2 / (list.length - 1)) * 10_000) / 10_000);
  assert.equal(tot.deadline_requests, 2);
  assert.equal(tot.deadline_met, 2);
  for (const dim of ['day', 'hour', 'model', 'route', 'tier', 'key', 'format', 'status']) {
    const g = await get(a.key, `/v1/usage?group_by=${dim}`);
    assert.equal(g.status, 200, dim);
    assert.ok(reportSchema(g.json), `${dim}: ${JSON.stringify(reportSchema.errors)}`);
    assert.deepEqual(g.json.group_by, [dim]);
    assert.equal(g.json.data.reduce((s: number, x: any) => s + x.requests, 0), tot.requests, dim);
    assert.equal(g.json.data.reduce((s: number, x: any) => s + x.cost_micro_usd, 0), tot.cost_micro_usd, dim);
  }
  const byTier = (await get(a.key, '/v1/usage?group_by=tier')).json.data;
  assert.deepEqual(byTier.map((x: any) => [x.tier, x.requests]), [[null, 1], ['flex', 2], ['standard', 2]]);
  const two = (await get(a.key, '/v1/usage?group_by=model,route')).json;
  assert.deepEqual(two.group_by, ['model', 'route']);
  assert.ok(two.data.some((x: any) => x.model === 'claude-haiku-4-5' && x.route === 'vendor_c' && x.requests === 1));
  const day = (await get(a.key, '/v1/usage?group_by=day')).json.data;
  assert.equal(day.length, 1);
  assert.equal(day[0].day, new Date().toISOString().slice(0, 10));
});

test('CSV with Accept: text/csv, one line per group and a header', async () => {
  const r = await get(a.key, '/v1/usage?group_by=tier', 'text/csv');
  assert.equal(r.status, 200);
  assert.match(r.type!, /^text\/csv/);
  const lines = r.text.trimEnd().split('\r\n');
  assert.equal(lines[0]!.split(',')[0], 'tier');
  assert.ok(lines[0]!.includes('savings_micro_usd'));
  assert.equal(lines.length, 4);
  const json = (await get(a.key, '/v1/usage?group_by=tier')).json.data;
  const cols = lines[0]!.split(',');
  const flexLine = lines.find((l) => l.startsWith('flex,'))!.split(',');
  assert.equal(Number(flexLine[cols.indexOf('cost_micro_usd')]), json.find((x: any) => x.tier === 'flex').cost_micro_usd);
});

test('filters and time range: model, tier, status, key, from/to as epoch seconds and ISO dates', async () => {
  assert.equal((await get(a.key, '/v1/usage?model=claude-haiku-4-5')).json.totals.requests, 1);
  assert.equal((await get(a.key, '/v1/usage?tier=flex')).json.totals.requests, 2);
  assert.equal((await get(a.key, '/v1/usage?status=400')).json.totals.requests, 1);
  assert.equal((await get(a.key, `/v1/usage?key=${a.keyId}`)).json.totals.requests, ids.length);
  assert.equal((await get(a.key, '/v1/usage/requests?route=vendor_c')).json.data.length, 1);
  const nowS = Math.floor(Date.now() / 1000);
  assert.equal((await get(a.key, `/v1/usage?from=${nowS - 3600}&to=${nowS + 60}`)).json.totals.requests, ids.length);
  assert.equal((await get(a.key, `/v1/usage?from=${nowS + 60}&to=${nowS + 120}`)).json.totals.requests, 0);
  const today = new Date().toISOString().slice(0, 10);
  assert.equal((await get(a.key, `/v1/usage?from=${today}&to=${today}`)).json.totals.requests, ids.length, 'a `to` date includes that whole day');
});

test('cursor pagination: newest first, every record once, no overlap', async () => {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r: any = await get(a.key, `/v1/usage/requests?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(r.status, 200);
    assert.ok(r.json.data.length <= 2);
    seen.push(...r.json.data.map((x: any) => x.id));
    cursor = r.json.next_cursor;
    assert.equal(r.json.has_more, cursor !== null);
    pages++;
  } while (cursor);
  assert.deepEqual(seen, [...ids].reverse());
  assert.equal(pages, Math.ceil(ids.length / 2));
});

test('bad parameters: 400 with a code naming the parameter', async () => {
  const cases: Array<[string, string, string]> = [
    ['/v1/usage?group_by=planet', 'invalid_group_by', 'group_by'],
    ['/v1/usage?group_by=day,day', 'invalid_group_by', 'group_by'],
    ['/v1/usage?group_by=org', 'invalid_group_by', 'group_by'],
    ['/v1/usage?from=yesterday', 'invalid_time_range', 'from'],
    ['/v1/usage?from=2026-11-22&to=2026-11-01', 'invalid_time_range', 'from'],
    ['/v1/usage?tier=cheap', 'invalid_filter', 'tier'],
    ['/v1/usage?route=vendor_z', 'invalid_filter', 'route'],
    ['/v1/usage?status=abc', 'invalid_filter', 'status'],
    ['/v1/usage?org=' + b.orgId, 'invalid_filter', 'org'],
    ['/v1/usage?bogus=1', 'invalid_filter', 'bogus'],
    ['/v1/usage/requests?limit=0', 'invalid_limit', 'limit'],
    ['/v1/usage/requests?limit=201', 'invalid_limit', 'limit'],
    ['/v1/usage/requests?cursor=zzz', 'invalid_cursor', 'cursor'],
    // Days that are not on the calendar (Date.parse rolls them into the next month).
    ['/v1/usage?from=2026-02-31', 'invalid_time_range', 'from'],
    ['/v1/usage?from=2026-10-01&to=2026-09-31', 'invalid_time_range', 'to'],
    ['/v1/usage?from=2026-11-01&to=2026-11-31T00:00Z', 'invalid_time_range', 'to'],
    // Control characters (PostgreSQL cannot store a NUL: it answered 500).
    ['/v1/usage?model=%00', 'invalid_filter', 'model'],
    ['/v1/usage/requests?key=a%00b', 'invalid_filter', 'key'],
  ];
  for (const [path, code, param] of cases) {
    const r = await get(a.key, path);
    assert.equal(r.status, 400, path);
    assert.equal(r.json.error.code, code, path);
    assert.equal(r.json.error.param, param, path);
  }
  assert.equal((await get('flex_live_nope', '/v1/usage')).status, 401);
  assert.equal((await fetch(`${t.url}/v1/usage`)).status, 401);
});

test('isolation: an organization sees only its own records, even filtering by another\'s key', async () => {
  const rb = await get(b.key, '/v1/usage/requests');
  assert.equal(rb.json.data.length, 1);
  assert.ok(rb.json.data.every((x: any) => x.org_id === b.orgId));
  assert.equal((await get(b.key, `/v1/usage?key=${a.keyId}`)).json.totals.requests, 0);
  assert.equal((await get(b.key, '/v1/usage')).json.totals.requests, 1);
});

test('GET /admin/v1/usage: every organization, org as a dimension; admin token only', async () => {
  const r = await t.admin('GET', '/admin/v1/usage?group_by=org');
  assert.equal(r.status, 200);
  assert.ok(reportSchema(r.json), JSON.stringify(reportSchema.errors));
  const byOrg = new Map(r.json.data.map((g: any) => [g.org, g.requests]));
  assert.equal(byOrg.get(a.orgId), ids.length);
  assert.equal(byOrg.get(b.orgId), 1);
  assert.equal((await t.admin('GET', `/admin/v1/usage?org=${b.orgId}`)).json.totals.requests, 1);
  const reqs = await t.admin('GET', '/admin/v1/usage/requests?limit=200');
  assert.equal(reqs.json.data.length, ids.length + 1);
  assert.equal((await get(a.key, '/admin/v1/usage')).status, 401, 'an API key is not the admin token');
  const orgs = await t.admin('GET', '/admin/v1/orgs');
  assert.ok(orgs.json.data.some((o: any) => o.id === a.orgId && o.managed.cashMicroUsd > 0));
});
