// What the operator's dashboard reads, bounded however many organizations there are (docs/usage.md
// "Usage API"): GET /admin/v1/orgs is paged (a snapshot per organization is a ledger read, and ten
// thousand in one answer held the process for over a second), and the operator's report by
// organization answers the top N by spend past usage.max_groups, with the totals of every record.
// The top-N query is also checked on both store adapters (PostgreSQL when reachable).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../lib/config.ts';
import { openDatabase } from '../../lib/store/db.ts';
import { openSqliteUsageStore } from '../../lib/usage/sqlite.ts';
import { openPostgresUsageStore } from '../../lib/usage/postgres.ts';
import type { UsageRecord } from '../../lib/usage/record.ts';
import type { UsageStore } from '../../lib/usage/store.ts';
import { startTestGateway, ADMIN_TOKEN } from '../helpers/gateway.ts';
import { createTestDatabase, postgresReachable, testPool } from '../helpers/postgres.ts';

const record = (orgId: string, i: number, at: number, cost: number): UsageRecord => ({
  id: `req_${orgId}_${i}`, org_id: orgId, key_id: 'key_x', at_ms: at, started_at_ms: at - 10, format: 'responses',
  model: 'gpt-5.4-mini', requested_route: 'vendor_a', served_route: 'vendor_a', tier: 'standard', reason: null,
  retries: 0, fallbacks: 0, status: 200, error_code: null, input_tokens: 10, cached_input_tokens: 0, cache_write_tokens: 0,
  output_tokens: 10, reasoning_tokens: 0, usage_estimated: false, cost_micro_usd: cost, standard_cost_micro_usd: cost,
  key_mode: 'managed', time_to_commit_ms: 5, duration_ms: 9, client_closed: false, deadline_met: null,
} as UsageRecord);

test('GET /admin/v1/orgs is paged: 100 by default, limit up to 200, and the pages list every organization once, in order', async () => {
  const t = await startTestGateway();
  try {
    const svc = t.gw.services;
    // Created in one millisecond: the cursor must order ties by id, not skip or repeat them.
    const now = svc.clock.now();
    for (let i = 0; i < 250; i++) {
      const org = await svc.orgs.createOrg(`org ${i}`, now);
      await svc.ledger.ensureOrg(org.id, now);
    }
    const every = (await svc.orgs.listOrgs()).map((o) => o.id);
    assert.equal(every.length, 250);

    const first = await t.admin('GET', '/admin/v1/orgs');
    assert.equal(first.status, 200);
    assert.equal(first.json.object, 'list');
    assert.equal(first.json.data.length, 100, 'a caller that names no limit gets a page, not every organization');
    assert.equal(first.json.has_more, true);
    assert.equal(typeof first.json.next_cursor, 'string');
    assert.equal(typeof first.json.data[0].managed.cashMicroUsd, 'number', 'each with its ledger snapshot');

    const seen: string[] = [];
    let cursor: string | null = null;
    let calls = 0;
    do {
      const page: { status: number; json: any } = await t.admin('GET', `/admin/v1/orgs?limit=70${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.status, 200);
      assert.ok(page.json.data.length <= 70);
      seen.push(...page.json.data.map((o: any) => o.id));
      cursor = page.json.next_cursor;
      assert.equal(page.json.has_more, cursor !== null);
      calls++;
    } while (cursor);
    assert.equal(calls, 4);
    assert.deepEqual(seen, every, 'every organization once, in the list\'s order');

    for (const [query, code] of [['limit=0', 'invalid_limit'], ['limit=201', 'invalid_limit'], ['limit=ten', 'invalid_limit'],
      ['cursor=not-a-cursor', 'invalid_cursor'], [`cursor=${Buffer.from('org_none').toString('base64url')}`, 'invalid_cursor']]) {
      const refused = await t.admin('GET', `/admin/v1/orgs?${query}`);
      assert.equal(refused.status, 400, query);
      assert.equal(refused.json.error.code, code, query);
    }
    assert.equal((await t.admin('GET', '/admin/v1/orgs?limit=200')).json.data.length, 200);
  } finally {
    await t.close();
  }
});

test('the operator\'s report by organization: past usage.max_groups, limit answers the top N by spend with every record\'s totals', async () => {
  const t = await startTestGateway({ config: { usage: { ...loadConfig(undefined).usage, max_groups: 5 } } });
  try {
    const now = Date.now();
    const orgs = [];
    for (let i = 0; i < 8; i++) orgs.push((await t.newOrg()).orgId);
    // Costs 100, 200, …, 800, two organizations tied at 800 (ordered by id).
    const costs = orgs.map((_, i) => Math.min(8, i + 2) * 100);
    await t.gw.services.usage.store.insert(orgs.map((org, i) => record(org, i, now - 3_600_000 + i, costs[i]!)));

    const refused = await t.admin('GET', '/admin/v1/usage?group_by=org');
    assert.equal(refused.status, 400, 'without limit the bound still refuses');
    assert.equal(refused.json.error.code, 'invalid_group_by');

    const top = await t.admin('GET', '/admin/v1/usage?group_by=org&limit=3');
    assert.equal(top.status, 200, JSON.stringify(top.json));
    const tied = [orgs[6]!, orgs[7]!].sort();
    assert.deepEqual(top.json.data.map((g: any) => [g.org, g.cost_micro_usd]), [[tied[0], 800], [tied[1], 800], [orgs[5], 700]]);
    assert.equal(top.json.totals.cost_micro_usd, costs.reduce((a, b) => a + b, 0), 'the totals count every organization');
    assert.equal(top.json.totals.requests, 8);

    for (const query of ['group_by=model&limit=3', 'limit=3', 'group_by=org,day&limit=3']) {
      const bad = await t.admin('GET', `/admin/v1/usage?${query}`);
      assert.equal(bad.status, 400, query);
      assert.equal(bad.json.error.code, 'invalid_limit', query);
    }
    const org = await t.newOrg();
    const own = await fetch(`${t.url}/v1/usage?group_by=model&limit=3`, { headers: { authorization: `Bearer ${org.key}` } });
    assert.equal(own.status, 400, 'an organization\'s own report takes no limit');
  } finally {
    await t.close();
  }
});

test('the operator\'s groups by organization carry each organization\'s name, however new; other groupings are unchanged', async () => {
  const t = await startTestGateway();
  try {
    const svc = t.gw.services;
    const now = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await svc.orgs.createOrg(`Acme ${i}`, now + i)).id);
    // The newest organization spends most; one record names an organization the store does not know.
    await svc.usage.store.insert([record(ids[2]!, 0, now - 60_000, 900), record(ids[0]!, 1, now - 60_000, 100),
      record('org_unknown', 2, now - 60_000, 50)]);

    const top = await t.admin('GET', '/admin/v1/usage?group_by=org&limit=2');
    assert.equal(top.status, 200, JSON.stringify(top.json));
    assert.deepEqual(top.json.data.map((g: any) => [g.org, g.org_name]), [[ids[2], 'Acme 2'], [ids[0], 'Acme 0']]);
    const all = await t.admin('GET', '/admin/v1/usage?group_by=day,org');
    assert.deepEqual(all.json.data.map((g: any) => [g.org, g.org_name]).sort(),
      [[ids[0], 'Acme 0'], [ids[2], 'Acme 2'], ['org_unknown', null]].sort());
    const byModel = await t.admin('GET', '/admin/v1/usage?group_by=model');
    assert.equal('org_name' in byModel.json.data[0], false, 'only groups by organization are named');
    // The CSV export names them too, beside the id (a name with a comma is quoted).
    await svc.store.sqlite!.prepare('UPDATE orgs SET name = ? WHERE id = ?').run('Acme, Inc.', ids[2]);
    const csv = await fetch(`${t.url}/admin/v1/usage?group_by=org`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'text/csv' } });
    const [header, ...rows] = (await csv.text()).trim().split('\r\n');
    assert.match(header!, /^org,org_name,requests,/);
    assert.deepEqual(rows.map((r) => r.split(',').slice(0, 2).join(',')).sort(), [`${ids[0]},Acme 0`, `${ids[2]},"Acme`, 'org_unknown,'].sort());
  } finally {
    await t.close();
  }
});

test('the top-N report by organization: the same groups in the same order on both store adapters', async (ctx) => {
  const records = Array.from({ length: 5_000 }, (_, i) => record(`org_${i % 37}`, i, 1_000_000 + i * 7, (i * 7_919) % 1_000));
  const filter = { fromMs: 0, toMs: 1e12, topByCost: 10 };
  const answer = async (store: UsageStore) => {
    await store.insert(records);
    return store.aggregate(filter, ['org'], 5);
  };
  const dir = mkdtempSync(join(tmpdir(), 'top-orgs-'));
  const db = openDatabase(dir);
  const lite = await answer(openSqliteUsageStore(db));
  db.close();
  rmSync(dir, { recursive: true, force: true });
  const sums = new Map<string, number>();
  for (const r of records) sums.set(r.org_id, (sums.get(r.org_id) ?? 0) + r.cost_micro_usd);
  const expected = [...sums].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).slice(0, 10);
  assert.deepEqual(lite.groups.map((g) => [g.org, g.cost_micro_usd]), expected);
  assert.equal(lite.totals.requests, records.length);

  if (!await postgresReachable()) return ctx.skip('PostgreSQL not reachable');
  const pgdb = await createTestDatabase('toporgs', { migrated: true });
  const pool = testPool(pgdb.url);
  try {
    assert.deepEqual(await answer(openPostgresUsageStore(pool)), lite);
  } finally {
    await pool.end();
    await pgdb.drop();
  }
});
