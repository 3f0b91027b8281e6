// The usage and management API's bounds (docs/usage.md "Bounds"), on a real gateway: a report
// past `usage.max_groups` groups is refused with what to narrow, before its groups are built; a
// report over many records lets the process serve other requests while it sums (SQLite, the
// gateway's own connection); the organization API has its own per-organization rate, apart from
// inference. Figures stay exact across the slices a report is read in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../lib/config.ts';
import type { UsageRecord } from '../../lib/usage/record.ts';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';

const HOUR = 3_600_000;

function record(org: { orgId: string; keyId: string }, i: number, at: number, extra: Partial<UsageRecord> = {}): UsageRecord {
  return {
    id: `req_${i}`, org_id: org.orgId, key_id: org.keyId, at_ms: at, started_at_ms: at - 10, format: 'responses',
    model: `model-${i % 3}`, requested_route: 'vendor_a', served_route: 'vendor_a', tier: i % 2 ? 'flex' : 'standard',
    reason: null, retries: 0, fallbacks: 0, status: 200, error_code: null, input_tokens: 1_000 + i, cached_input_tokens: 0,
    cache_write_tokens: 0, output_tokens: 7, reasoning_tokens: 0, usage_estimated: false, cost_micro_usd: 1_000_003 + i,
    standard_cost_micro_usd: 2_000_011 + i, key_mode: i % 5 ? 'managed' : 'byok', time_to_commit_ms: 5, duration_ms: 9,
    client_closed: false, deadline_met: null, ...extra,
  } as UsageRecord;
}

const get = async (t: TestGateway, key: string, path: string, accept = 'application/json') => {
  const res = await fetch(t.url + path, { headers: { authorization: `Bearer ${key}`, accept } });
  return { status: res.status, headers: res.headers, body: await res.text() };
};

test('a report past usage.max_groups is 400 invalid_group_by telling what to narrow, in JSON and CSV; at the maximum it answers exactly', async () => {
  const t = await startTestGateway({ config: { usage: { ...loadConfig(undefined).usage, max_groups: 6 } } });
  try {
    const org = await t.newOrg();
    const now = Date.now();
    // 3 models × 4 hours = 12 (hour, model) groups; 3 model groups; 4 hour groups.
    await t.gw.services.usage.store.insert(Array.from({ length: 24 }, (_, i) => record(org, i, now - (1 + (i % 4)) * HOUR)));
    for (const accept of ['application/json', 'text/csv']) {
      const refused = await get(t, org.key, '/v1/usage?group_by=hour,model', accept);
      assert.equal(refused.status, 400);
      const error = JSON.parse(refused.body).error;
      assert.equal(error.code, 'invalid_group_by');
      assert.equal(error.param, 'group_by');
      assert.match(error.message, /more than 6 groups.*fewer dimensions.*narrow from\/to/);
    }
    const admin = await t.admin('GET', '/admin/v1/usage?group_by=org,hour,model');
    assert.equal(admin.status, 400, 'the operator\'s reports are bounded too');

    const byModel = JSON.parse((await get(t, org.key, '/v1/usage?group_by=model')).body);
    assert.deepEqual(byModel.data.map((g: any) => [g.model, g.requests]), [['model-0', 8], ['model-1', 8], ['model-2', 8]]);
    const expected = (i: number[]) => i.reduce((sum, n) => sum + 1_000_003 + n, 0);
    assert.equal(byModel.data[0].cost_micro_usd, expected([0, 3, 6, 9, 12, 15, 18, 21]));
    assert.equal(byModel.totals.cost_micro_usd, expected(Array.from({ length: 24 }, (_, i) => i)));
    const hours = await get(t, org.key, '/v1/usage?group_by=hour', 'text/csv');
    assert.equal(hours.status, 200);
    assert.equal(hours.body.trim().split('\r\n').length, 1 + 4);
  } finally {
    await t.close();
  }
});

test('a report over many records lets the process answer meanwhile, and its figures are exact across slices', async () => {
  const t = await startTestGateway();
  try {
    const org = await t.newOrg();
    const now = Date.now();
    const n = 60_000;   // 30 slices of lib/usage/sqlite.ts SLICE_ROWS
    const records: UsageRecord[] = [];
    for (let i = 0; i < n; i++) {
      // Two slices' worth in one millisecond: a slice never splits a millisecond's records.
      const at = i < 4_000 ? now - 5 * HOUR : now - 1 - Math.floor((i * 29 * 24 * HOUR) / n);
      records.push(record(org, i, at, i % 7 ? {} : { status: 429, error_code: 'rate_limit_exceeded', cost_micro_usd: 0, key_mode: null }));
    }
    for (let i = 0; i < n; i += 10_000) await t.gw.services.usage.store.insert(records.slice(i, i + 10_000));

    for (const path of ['/v1/usage?group_by=day,model', '/v1/usage/requests?model=no-such-model']) {
      // /healthz is asked right after the report reached the server: a report summed in one
      // synchronous statement has answered before the process reads anything else.
      const arrived = new Promise<void>((resolve) => {
        const listener = (req: { url?: string }): void => {
          if (req.url !== path) return;
          t.gw.server.off('request', listener);
          setImmediate(resolve);
        };
        t.gw.server.on('request', listener);
      });
      const report = get(t, org.key, path).then((r) => ({ ...r, at: performance.now() }));
      await arrived;
      const health = await fetch(`${t.url}/healthz`);
      const healthAt = performance.now();
      assert.equal(health.status, 200);
      const done = await report;
      assert.equal(done.status, 200, done.body);
      assert.ok(healthAt < done.at, `${path}: /healthz was answered while the report ran (not after it)`);
    }

    const all = JSON.parse((await get(t, org.key, '/v1/usage?group_by=day,model')).body);
    const sum = (pick: (r: UsageRecord) => number) => records.reduce((total, r) => total + pick(r), 0);
    assert.equal(all.totals.requests, n);
    assert.equal(all.totals.errors, records.filter((r) => r.status >= 400).length);
    assert.equal(all.totals.cost_micro_usd, sum((r) => r.cost_micro_usd));
    assert.equal(all.totals.managed_cost_micro_usd, sum((r) => (r.key_mode === 'managed' ? r.cost_micro_usd : 0)));
    assert.equal(all.totals.input_tokens, sum((r) => r.input_tokens));
    assert.equal(all.data.reduce((total: number, g: any) => total + g.cost_micro_usd, 0), all.totals.cost_micro_usd);
    const day = new Date(now - 5 * HOUR).toISOString().slice(0, 10);
    const oneGroup = all.data.find((g: any) => g.day === day && g.model === 'model-1');
    const inGroup = records.filter((r) => new Date(r.at_ms).toISOString().slice(0, 10) === day && r.model === 'model-1');
    assert.equal(oneGroup.requests, inGroup.length);
    assert.equal(oneGroup.standard_cost_micro_usd, inGroup.reduce((total, r) => total + r.standard_cost_micro_usd, 0));
    const keys = all.data.map((g: any) => `${g.day} ${g.model}`);
    assert.deepEqual(keys, [...keys].sort(), 'groups in dimension order');
  } finally {
    await t.close();
  }
});

test('the organization API has its own per-organization rate (default 120 a minute); inference is not counted against it', async () => {
  const defaults = loadConfig(undefined).abuse_limits;
  assert.equal(defaults.organization_api_requests, 120);
  assert.deepEqual([defaults.organization_requests, defaults.api_key_requests, defaults.client_ip_requests], [null, null, null],
    'inference keeps its defaults');

  const t = await startTestGateway({ config: { abuse_limits: { ...loadConfig(undefined).abuse_limits, organization_api_requests: 3 } } });
  try {
    const org = await t.newOrg({ balance: 1_000_000 });
    const other = await t.newOrg();
    for (const path of ['/v1/usage', '/v1/usage/requests', '/v1/organization']) assert.equal((await get(t, org.key, path)).status, 200);
    for (const path of ['/v1/usage', '/v1/organization/keys', '/v1/organization']) {
      const refused = await get(t, org.key, path);
      assert.equal(refused.status, 429, path);
      assert.equal(JSON.parse(refused.body).error.code, 'rate_limit_exceeded');
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
    }
    assert.equal((await get(t, other.key, '/v1/usage')).status, 200, 'another organization has its own count');
    const inference = await fetch(`${t.url}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-mini', input: `hi ${sim({ output_tokens: 2 })}`, start_within: 'now' }),
    });
    assert.equal(inference.status, 200, 'inference is not limited by it');
    await inference.arrayBuffer();
    assert.equal((await get(t, org.key, '/v1/limits')).status, 200, '/v1/limits is not part of it');
    assert.equal((await t.admin('GET', `/admin/v1/usage?org=${org.orgId}`)).status, 200, 'nor is the operator');
  } finally {
    await t.close();
  }
});
