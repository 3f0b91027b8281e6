// Operations: the gateway CLI over the admin API, health and readiness, Prometheus metrics, the
// admin token, and a drain on shutdown that refuses new requests.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { runCli, toCall } from '../../lib/cli.ts';
import { startTestGateway, ADMIN_TOKEN, sim, waitFor, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
before(async () => { t = await startTestGateway(); });
after(() => t.close());

const cli = async (...argv: string[]) => {
  const r = await runCli(argv, { GATEWAY_URL: t.url, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN });
  return { status: r.status, json: JSON.parse(r.body) };
};

test('the gateway CLI creates an org and a key, tops up, sets overrides, reviews, and reads the ledger', async () => {
  const org = await cli('org', 'create', 'acme');
  assert.equal(org.status, 201);
  assert.match(org.json.id, /^org_/);
  const key = await cli('key', 'create', org.json.id, '--default-start-within', 'now');
  assert.match(key.json.key, /^flex_live_/);
  assert.equal((await cli('topup', org.json.id, '--cash', '2000000', '--credit', '500000')).json.cashMicroUsd, 2_000_000);
  assert.equal((await cli('overrides', org.json.id, '--concurrency', '3')).json.concurrencyLimit, 3);
  assert.equal((await cli('review', 'start', org.json.id)).json.pausedReason, 'account_under_review');
  assert.equal((await cli('review', 'end', org.json.id)).json.serving, 'ok');
  assert.equal((await cli('provider-key', 'set', org.json.id, 'vendor_a', 'sk-own')).status, 200);
  const c = new OpenAI({ apiKey: key.json.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const { response } = await c.responses.create({ model: 'gpt-5.4-mini', input: 'hi' } as any).withResponse();
  assert.equal(response.headers.get('x-service-spend-remaining'), 'unlimited', 'the key default "now" applied and the own key served');
  assert.equal((await cli('provider-key', 'delete', org.json.id, 'vendor_a')).status, 200);
  const ledger = await cli('ledger', org.json.id);
  assert.equal(ledger.json.snapshot.creditMicroUsd, 500_000);
  assert.ok(ledger.json.entries.some((e: any) => e.kind === 'topup'));
  assert.equal((await cli('key', 'revoke', key.json.id)).status, 200);
  await assert.rejects(c.responses.create({ model: 'gpt-5.4-mini', input: 'hi' } as any), (e: any) => e.status === 401 && e.code === 'invalid_api_key');
  assert.throws(() => toCall(['frobnicate']), /usage: gateway/);
  // The organization list is paged: the CLI passes the page's query and prints the cursor.
  await cli('org', 'create', 'second');
  const first = await cli('orgs', 'limit=1');
  assert.equal(first.json.data.length, 1);
  assert.equal(first.json.has_more, true);
  const next = await cli('orgs', `limit=1&cursor=${first.json.next_cursor}`);
  assert.notEqual(next.json.data[0].id, first.json.data[0].id);
});

test('a top-up retried with its Idempotency-Key is credited once (admin API and CLI)', async () => {
  const org = await t.newOrg();
  const topup = (body: unknown, key?: string) => fetch(`${t.url}/admin/v1/orgs/${org.orgId}/topups`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(body),
  });
  const first = await topup({ cash_micro_usd: 3_000_000 }, 'stripe-evt-1');
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('idempotent-replayed'), null);
  assert.equal((await first.json()).cashMicroUsd, 3_000_000);
  const again = await topup({ cash_micro_usd: 3_000_000 }, 'stripe-evt-1');
  assert.equal(again.status, 200);
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.equal((await again.json()).cashMicroUsd, 3_000_000, 'the retry credited nothing');
  const conflict = await topup({ cash_micro_usd: 4_000_000 }, 'stripe-evt-1');
  assert.equal(conflict.status, 409);
  assert.equal((await conflict.json()).error.code, 'idempotency_key_reused');
  for (const bad of ['has space', 'x'.repeat(256), 'caf\u00e9']) {
    const r = await topup({ cash_micro_usd: 1 }, bad);
    assert.equal(r.status, 400, bad);
    assert.equal((await r.json()).error.code, 'invalid_request');
  }
  // The CLI sends the key as the header.
  for (let i = 0; i < 2; i++) {
    assert.equal((await cli('topup', org.orgId, '--cash', '1000000', '--idempotency-key', 'stripe-evt-2')).status, 200);
  }
  const ledger = await cli('ledger', org.orgId);
  assert.equal(ledger.json.snapshot.cashMicroUsd, 4_000_000);
  assert.deepEqual(ledger.json.entries.filter((e: any) => e.kind === 'topup').map((e: any) => e.idempotency_key).sort(),
    ['stripe-evt-1', 'stripe-evt-2']);
});

test('the admin API refuses a wrong token and validates bodies', async () => {
  const res = await fetch(`${t.url}/admin/v1/orgs`, { method: 'POST', headers: { authorization: 'Bearer nope' }, body: '{"name":"x"}' });
  assert.equal(res.status, 401);
  assert.equal((await res.json()).error.code, 'admin_unauthorized');
  assert.equal((await t.admin('POST', '/admin/v1/orgs', { name: '' })).status, 400);
  assert.equal((await t.admin('POST', '/admin/v1/orgs/org_missing/topups', { cash_micro_usd: 1 })).status, 404);
  const org = await t.newOrg();
  assert.equal((await t.admin('POST', `/admin/v1/orgs/${org.orgId}/topups`, { cash_micro_usd: 1.5 })).status, 400);
  assert.equal((await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/provider-keys/cloud_b`, { key: 'not-aws' })).status, 400);
  const refused = (await t.admin('POST', `/admin/v1/orgs/${org.orgId}/keys`, { default_start_within: '11m' })).json.error;
  assert.equal(refused.code, 'invalid_start_within');
  // The refusal names the field the caller sent, not the request body's start_within.
  assert.equal(refused.param, 'default_start_within');
  assert.match(refused.message, /^default_start_within must be/);
});

test('health, readiness and Prometheus metrics', async () => {
  assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
  assert.deepEqual(await (await fetch(`${t.url}/readyz`)).json(), { status: 'ready' });
  const org = await t.newOrg({ ownKeys: ['vendor_a'] });
  const c = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  await c.responses.create({ model: 'gpt-5.4', input: sim({ flex_start_ms: 0 }), start_within: '00h-00m-10s' } as any);
  const text = await (await fetch(`${t.url}/metrics`)).text();
  assert.match(text, /gateway_requests_total\{endpoint="responses",status="200"\} \d+/);
  assert.match(text, /gateway_routing_outcomes_total\{reason="flex_committed",route="vendor_a",tier="flex"\} 1/);
  assert.match(text, /gateway_time_to_commit_seconds_bucket/);
});

test('shutdown drains: a stream in flight runs to its end, new connections are refused', async () => {
  const t2 = await startTestGateway();
  const org = await t2.newOrg({ ownKeys: ['vendor_a'] });
  const c = new OpenAI({ apiKey: org.key, baseURL: `${t2.url}/v1`, maxRetries: 0 });
  const stream: any = await c.responses.create({ model: 'gpt-5.4', input: sim({ output_tokens: 20, tokens_per_s: 40 }), start_within: 'now', stream: true } as any);
  const closing = t2.gw.close();
  await waitFor(() => t2.gw.services.shuttingDown, 'shutdown to begin');
  await assert.rejects(fetch(`${t2.url}/healthz`, { headers: { connection: 'close' } }), 'the listener is closed');
  let completed = false;
  for await (const ev of stream) if (ev.type === 'response.completed') completed = true;
  assert.ok(completed, 'the in-flight stream ran to its end');
  await closing;
  await t2.close();
});

test('organizations are isolated: one org\'s own provider key, balance and limits never serve another', async () => {
  const a = await t.newOrg({ ownKeys: ['vendor_a'], balance: 1_000_000 });
  const b = await t.newOrg({ balance: 2_000_000 });
  const ca = new OpenAI({ apiKey: a.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const cb = new OpenAI({ apiKey: b.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const ra = await ca.responses.create({ model: 'gpt-5.4-mini', input: 'hi', start_within: 'now' } as any).withResponse();
  const rb = await cb.responses.create({ model: 'gpt-5.4-mini', input: 'hi', start_within: 'now' } as any).withResponse();
  assert.equal(ra.response.headers.get('x-service-spend-remaining'), 'unlimited', 'A runs on its own key');
  assert.match(rb.response.headers.get('x-service-spend-remaining')!, /^\d+$/, 'B runs managed, never on A\'s key');
  const limits = async (key: string) => (await fetch(`${t.url}/v1/limits`, { headers: { authorization: `Bearer ${key}` } })).json();
  const [la, lb] = [await limits(a.key), await limits(b.key)];
  assert.equal(la.managed.balance.cash_micro_usd, 1_000_000, 'A\'s own-key request cost A\'s balance nothing');
  assert.equal(lb.managed.balance.cash_micro_usd, 2_000_000 - Number(rb.response.headers.get('x-service-cost')));
  // B's review pauses B alone.
  await t.admin('POST', `/admin/v1/orgs/${b.orgId}/review`);
  assert.equal((await limits(a.key)).managed.serving, 'ok');
  assert.equal((await limits(b.key)).managed.paused_reason, 'account_under_review');
});
