// Managed usage records reconcile with the ledger exactly: for every UTC day, the sum of the
// costs of records served on the service's key equals the spend the ledger settled that day —
// across successes, flex, failures before commit, upstream resets and in-stream errors, clients
// that go away before and after commit, refusals, and an own-key route in a mixed chain.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, waitFor, sim, type TestGateway } from '../helpers/gateway.ts';
import { utcDay } from '../../lib/ledger/rules.ts';

let t: TestGateway;
before(async () => { t = await startTestGateway({ simulatedTime: true }); });
after(() => t.close());

const post = (key: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> =>
  fetch(`${t.url}/v1/responses`, { method: 'POST', body: JSON.stringify(body), signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
const mini = (directive: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  ({ model: 'gpt-5.4-mini', input: `hello ${sim(directive)}`, start_within: 'now', ...extra });

/** Every way a request can end, once each. */
async function dayOfTraffic(key: string, tag: string): Promise<void> {
  const c = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  // served: standard, flex, streamed
  await c.responses.create(mini({ output_tokens: 9 }) as any);
  await c.responses.create({ model: 'gpt-5.4', input: `f ${sim({ flex_start_ms: 0, output_tokens: 30 })}`, start_within: '00h-00m-30s' } as any);
  await (await post(key, mini({ output_tokens: 12 }, { stream: true }))).text();
  // failure before commit: 502, charged nothing
  await assert.rejects(c.responses.create(mini({ fail: [500], id: `rec-fail-${tag}` }) as any), (e: any) => e.status === 502);
  // upstream reset and in-stream error after commit: charged the estimate
  await (await post(key, mini({ output_tokens: 50, reset_after_tokens: 5 }, { stream: true }))).text();
  await (await post(key, mini({ output_tokens: 50, error_after_tokens: 4 }, { stream: true }))).text();
  // a client gone mid-stream (charged the estimate) and one gone before commit (charged nothing)
  const ac = new AbortController();
  const res = await post(key, mini({ output_tokens: 400, tokens_per_s: 40 }, { stream: true }), ac.signal);
  const reader = res.body!.getReader();
  while (!new TextDecoder().decode((await reader.read()).value).includes('output_text.delta'));
  ac.abort();
  await waitFor(() => t.gw.services.inflight.size === 0, 'the aborted stream ended');
  const ac2 = new AbortController();
  const pending = post(key, mini({ standard_start_ms: 30_000 }), ac2.signal).catch((e) => e);
  await waitFor(() => t.gw.services.inflight.size === 1, 'a request waiting for its upstream');
  ac2.abort();
  await pending;
  // refused before anything ran
  assert.equal((await post(key, { model: 'gpt-5.4-mini', input: 'x' })).status, 400);
  // a mixed chain served by the org's own key: the managed hold settles 0
  const g = await post(key, { model: 'gemini-2.5-flash', input: `m ${sim({ output_tokens: 6 })}`, start_within: 'now', provider: ['vendor_b', 'cloud_a'] });
  assert.equal(g.headers.get('x-service-spend-remaining'), 'unlimited');
  await g.text();
  await waitFor(() => t.gw.services.inflight.size === 0, 'every request ended');
}

test('for each UTC day, managed record costs = the ledger\'s settled spend; byok records cost but settle nothing', async () => {
  const org = await t.newOrg({ balance: 20_000_000, ownKeys: ['vendor_b'] });
  await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/overrides`, { concurrency: 50, daily_spend_micro_usd: 1_000_000_000 });
  await dayOfTraffic(org.key, 'd1');
  const day1 = utcDay(t.clock!.now());
  t.clock!.increment(86_400_000);
  await dayOfTraffic(org.key, 'd2');
  const day2 = utcDay(t.clock!.now());
  await t.gw.services.usage.flush();

  const ledger = (await t.admin('GET', `/admin/v1/orgs/${org.orgId}/ledger`)).json;
  assert.equal(ledger.snapshot.reservedMicroUsd, 0);
  const settledByDay = new Map<number, number>();
  for (const e of ledger.entries) {
    if (e.kind === 'settle') settledByDay.set(utcDay(e.at_ms), (settledByDay.get(utcDay(e.at_ms)) ?? 0) + e.amount_micro_usd);
  }
  const res = await fetch(`${t.url}/v1/usage?group_by=day&from=${Math.floor(t.clock!.now() / 1000) - 3 * 86_400}&to=${Math.floor(t.clock!.now() / 1000) + 60}`, { headers: { authorization: `Bearer ${org.key}` } });
  const usage: any = await res.json();
  assert.equal(usage.data.length, 2);
  for (const [i, day] of [day1, day2].entries()) {
    const g = usage.data[i];
    assert.equal(g.day, new Date(day * 86_400_000).toISOString().slice(0, 10));
    assert.equal(g.requests, 10, 'every request left one record');
    assert.ok(g.managed_cost_micro_usd > 0);
    assert.equal(g.managed_cost_micro_usd, settledByDay.get(day), `day ${g.day}: records = ledger`);
    assert.ok(g.cost_micro_usd > g.managed_cost_micro_usd, 'the own-key request has a cost the balance did not pay');
  }
  assert.equal(ledger.snapshot.dailyUsedMicroUsd, settledByDay.get(day2), 'today\'s settled spend');
  assert.equal(ledger.snapshot.cashMicroUsd, 20_000_000 - usage.totals.managed_cost_micro_usd);

  // the records say how each request ended
  const list: any = await (await fetch(`${t.url}/v1/usage/requests?limit=200&from=0`, { headers: { authorization: `Bearer ${org.key}` } })).json();
  const today = list.data.filter((r: any) => utcDay(r.at_ms) === day2);
  const closed = today.filter((r: any) => r.client_closed);
  assert.equal(closed.length, 2);
  assert.ok(closed.every((r: any) => r.status === 499 && r.error_code === 'client_closed_request'));
  assert.equal(closed.filter((r: any) => r.cost_micro_usd > 0 && r.usage_estimated).length, 1, 'gone mid-stream: charged the estimate');
  assert.equal(today.filter((r: any) => r.status === 502 && r.error_code === 'provider_error' && r.cost_micro_usd === 0).length, 1);
  assert.equal(today.filter((r: any) => r.status === 200 && r.error_code === 'provider_error' && r.usage_estimated).length, 2, 'reset and in-stream error');
  assert.equal(today.filter((r: any) => r.key_mode === 'byok').length, 1);
  assert.equal(today.filter((r: any) => r.error_code === 'missing_start_within').length, 1);
});
