// Usage records shared by several gateways: two real gateway processes on one real PostgreSQL
// database, requests through both; the usage report and the raw listing of either process show
// every request, whichever process served it (each writes its records to the shared table).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_USAGE } from '../../lib/usage/service.ts';
import type { GatewayProcess } from '../helpers/gateway-process.ts';
import { sharedGateways } from '../helpers/shared-gateways.ts';
import { sim, waitFor } from '../helpers/wait.ts';

const { skip, admin: ADMIN, gws } = await sharedGateways('usage', { CHILD_CONFIG: JSON.stringify({ usage: { ...DEFAULT_USAGE, flush_interval_ms: 100 } }) });

async function call(g: GatewayProcess, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(g.url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, json: await res.json(), headers: res.headers };
}

test('two gateways on one PostgreSQL: GET /v1/usage and /v1/usage/requests on either show the requests of both', { skip }, async () => {
  const { json: org } = await call(gws[0]!, 'POST', '/admin/v1/orgs', ADMIN, { name: 'shared usage' });
  assert.equal((await call(gws[0]!, 'POST', `/admin/v1/orgs/${org.id}/topups`, ADMIN, { cash_micro_usd: 10_000_000 })).status, 200);
  const { json: key } = await call(gws[1]!, 'POST', `/admin/v1/orgs/${org.id}/keys`, ADMIN, {});
  const sent: Array<{ id: string; cost: number; via: number }> = [];
  for (let i = 0; i < 6; i++) {
    const via = i % 2;
    const r = await call(gws[via]!, 'POST', '/v1/responses', key.key,
      { model: 'gpt-5.4-mini', start_within: 'now', max_output_tokens: 16, input: `hello ${i} ${sim({ output_tokens: 3 })}` });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    sent.push({ id: r.headers.get('x-request-id')!, cost: Number(r.headers.get('x-service-cost')), via });
  }
  const expectedCost = sent.reduce((s, x) => s + x.cost, 0);
  assert.ok(expectedCost > 0);
  for (const g of gws) {
    await waitFor(async () => (await call(g, 'GET', '/v1/usage', key.key)).json.totals?.requests === 6, 'every record visible from each process');
    const report = await call(g, 'GET', '/v1/usage?group_by=model', key.key);
    assert.equal(report.status, 200);
    assert.equal(report.json.totals.requests, 6);
    assert.equal(report.json.totals.cost_micro_usd, expectedCost);
    assert.equal(report.json.totals.managed_cost_micro_usd, expectedCost);
    const listed = await call(g, 'GET', '/v1/usage/requests?limit=200', key.key);
    assert.deepEqual(listed.json.data.map((x: any) => x.id).sort(), sent.map((x) => x.id).sort());
    const adminView = await call(g, 'GET', `/admin/v1/usage?org=${org.id}`, ADMIN);
    assert.equal(adminView.json.totals.requests, 6);
  }
});
