// The usage store's contract, run against both adapters: write, group, page, filter, prune and
// organization isolation, each with expected values; then the same records written to both and
// every report compared (group by every dimension and pairs, filters, every cursor page): the
// PostgreSQL adapter answers exactly what the SQLite one does. PostgreSQL runs are gated like the
// other shared-store suites (test/helpers/postgres.ts); each uses its own gwtest_* database.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { openDatabase, type DB } from '../../lib/store/db.ts';
import { openSqliteUsageStore } from '../../lib/usage/sqlite.ts';
import { openPostgresUsageStore } from '../../lib/usage/postgres.ts';
import { DIMENSIONS, TooManyGroups, type Cursor, type Dimension, type UsageFilter, type UsageStore } from '../../lib/usage/store.ts';
import type { UsageRecord } from '../../lib/usage/record.ts';
import { createTestDatabase, postgresReachable, testPool, type TestDatabase } from '../helpers/postgres.ts';

const available = await postgresReachable();
const pgSkip = available ? false : 'PostgreSQL not reachable';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 20, 22, 30);   // 2026-11-20T22:30Z

const rec = (i: number, over: Partial<UsageRecord> = {}): UsageRecord => ({
  id: `req-${i}`, org_id: 'org_a', key_id: 'key_1', at_ms: T0 + i, started_at_ms: T0 + i - 50,
  format: 'responses', model: 'gpt-5.4', requested_route: 'vendor_a', served_route: 'vendor_a', tier: 'standard',
  reason: 'deadline', retries: 0, fallbacks: 0, status: 200, error_code: null,
  input_tokens: 10, cached_input_tokens: 2, cache_write_tokens: 1, output_tokens: 5, reasoning_tokens: 1,
  usage_estimated: false, cost_micro_usd: 100, standard_cost_micro_usd: 100, key_mode: 'managed',
  time_to_commit_ms: 20, duration_ms: 50, client_closed: false, deadline_met: null,
  ...over,
});

/** A mixed set: two days and several hours, both tiers, errors, nulls, keys, formats, two orgs,
 *  model names whose bytewise and dictionary orders differ ('Zeta' < 'alpha' bytewise). */
function mixed(n: number, seed = 7): UsageRecord[] {
  let s = seed;
  const rnd = (k: number): number => { s = (s * 1_103_515_245 + 12_345) % 2_147_483_648; return s % k; };
  const models = ['gpt-5.4', 'Zeta-1', 'alpha-2', null];
  const routes = ['vendor_a', 'cloud_a', null] as const;
  return Array.from({ length: n }, (_, i) => {
    const route = routes[rnd(3)]!;
    const tier = route ? (rnd(2) ? 'flex' : 'standard') : null;
    const cost = rnd(5_000);
    return rec(i, {
      id: `mix-${i}`, org_id: rnd(4) ? 'org_a' : 'org_b', key_id: `key_${rnd(3)}`,
      at_ms: T0 + rnd(30) * HOUR + rnd(1000), format: ['responses', 'chat', 'messages'][rnd(3)]!,
      model: models[rnd(4)]!, served_route: route, requested_route: route, tier,
      status: route ? (rnd(5) ? 200 : 502) : [400, 429][rnd(2)]!, error_code: route ? null : 'bad',
      input_tokens: rnd(10_000), output_tokens: rnd(3_000), cost_micro_usd: cost,
      standard_cost_micro_usd: tier === 'flex' ? cost * 2 : cost, key_mode: route ? (rnd(3) ? 'managed' : 'byok') : null,
      time_to_commit_ms: route ? rnd(900) : null, deadline_met: route && rnd(2) ? rnd(3) > 0 : null,
      usage_estimated: rnd(7) === 0, client_closed: rnd(9) === 0,
    });
  });
}

interface Adapter { open(): Promise<UsageStore>; done(): Promise<void> }

function sqliteAdapter(): Adapter {
  const dirs: string[] = [];
  const dbs: DB[] = [];
  return {
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'usage-contract-'));
      dirs.push(dir);
      const db = openDatabase(dir);
      dbs.push(db);
      return openSqliteUsageStore(db);
    },
    async done() { for (const d of dbs) d.close(); for (const d of dirs) rmSync(d, { recursive: true, force: true }); },
  };
}

/** Each open() is a fresh database (migrated, so the usage table is the migration's). */
function postgresAdapter(): Adapter {
  const dbs: TestDatabase[] = [];
  const pools: pg.Pool[] = [];
  return {
    async open() {
      const db = await createTestDatabase('usage', { migrated: true });
      dbs.push(db);
      const pool = testPool(db.url);
      pools.push(pool);
      return openPostgresUsageStore(pool);
    },
    async done() { await Promise.all(pools.map((p) => p.end())); await Promise.all(dbs.map((d) => d.drop())); },
  };
}

const ALL: UsageFilter = { fromMs: 0, toMs: T0 + 10 * DAY };

async function pages(store: UsageStore, filter: UsageFilter, limit: number): Promise<Array<{ ids: string[]; next: Cursor | null }>> {
  const out: Array<{ ids: string[]; next: Cursor | null }> = [];
  let after: Cursor | null = null;
  do {
    const p = await store.list(filter, limit, after);
    out.push({ ids: p.records.map((r) => r.id), next: p.next });
    after = p.next;
  } while (after && out.length < 1000);
  return out;
}

function contract(name: string, adapter: Adapter, skip: string | false): void {
  after(() => adapter.done());

  test(`${name}: a written record reads back field for field (booleans, nulls, numbers)`, { skip }, async () => {
    const store = await adapter.open();
    const a = rec(1, { tier: 'flex', deadline_met: true, usage_estimated: true, client_closed: true, standard_cost_micro_usd: 250 });
    const b = rec(2, { model: null, served_route: null, requested_route: null, tier: null, reason: null, key_mode: null,
      time_to_commit_ms: null, status: 400, error_code: 'invalid_request', deadline_met: null, cost_micro_usd: 0, standard_cost_micro_usd: 0 });
    const c = rec(3, { deadline_met: false, cost_micro_usd: 9_007_199_254_740, at_ms: T0 + 3 });
    await store.insert([a, b, c]);
    const page = await store.list(ALL, 10, null);
    assert.deepEqual(page.records.map(({ seq, ...r }) => r), [c, b, a]);
    for (const r of page.records) assert.equal(typeof r.seq, 'number');
    assert.equal(page.next, null);
  });

  test(`${name}: totals and groups with exact sums, in order, nulls first`, { skip }, async () => {
    const store = await adapter.open();
    await store.insert([
      rec(1, { tier: 'flex', model: 'alpha', cost_micro_usd: 50, standard_cost_micro_usd: 100, deadline_met: true }),
      rec(2, { tier: 'flex', model: 'Zeta', cost_micro_usd: 60, standard_cost_micro_usd: 120, deadline_met: false, key_mode: 'byok' }),
      rec(3, { model: 'alpha', cost_micro_usd: 100 }),
      rec(4, { model: null, tier: null, served_route: null, key_mode: null, status: 400, cost_micro_usd: 0, standard_cost_micro_usd: 0,
        at_ms: T0 + 2 * HOUR }),
    ]);
    const { groups, totals } = await store.aggregate(ALL, ['model']);
    assert.deepEqual(groups.map((g) => g.model), [null, 'Zeta', 'alpha']);
    assert.deepEqual(groups.map((g) => g.requests), [1, 1, 2]);
    assert.equal(totals.requests, 4);
    assert.equal(totals.errors, 1);
    assert.equal(totals.cost_micro_usd, 210);
    assert.equal(totals.managed_cost_micro_usd, 150);
    assert.equal(totals.standard_cost_micro_usd, 320);
    assert.equal(totals.savings_micro_usd, 110);
    assert.equal(totals.served_requests, 3);
    assert.equal(totals.flex_requests, 2);
    assert.equal(totals.flex_share, 0.6667);
    assert.equal(totals.deadline_requests, 2);
    assert.equal(totals.deadline_met, 1);
    assert.equal(totals.input_tokens, 40);
    const days = await store.aggregate(ALL, ['day', 'hour']);
    assert.deepEqual(days.groups.map((g) => [g.day, g.hour, g.requests]),
      [['2026-11-20', '2026-11-20T22:00:00Z', 3], ['2026-11-21', '2026-11-21T00:00:00Z', 1]]);
    const status = await store.aggregate(ALL, ['status', 'tier']);
    assert.deepEqual(status.groups.map((g) => [g.status, g.tier, g.requests]), [[200, 'flex', 2], [200, 'standard', 1], [400, null, 1]]);
    const empty = await store.aggregate({ fromMs: 0, toMs: 1 }, ['day']);
    assert.deepEqual(empty.groups, []);
    assert.equal(empty.totals.requests, 0);
    assert.equal(empty.totals.cost_micro_usd, 0);
    assert.equal(empty.totals.flex_share, 0);
  });

  test(`${name}: cursor pages, newest first, with filters and the time range; same instant ordered by insertion`, { skip }, async () => {
    const store = await adapter.open();
    const records = Array.from({ length: 23 }, (_, i) => rec(i, {
      at_ms: T0 + Math.floor(i / 3),    // three records per instant: the cursor's seq breaks ties
      tier: i % 2 ? 'flex' : 'standard', key_id: i % 5 === 0 ? 'key_2' : 'key_1', status: i % 7 === 0 ? 502 : 200,
    }));
    await store.insert(records);
    const walked = await pages(store, ALL, 4);
    assert.deepEqual(walked.flatMap((p) => p.ids), records.map((r) => r.id).reverse());
    assert.equal(walked.length, 6);
    assert.equal(walked.at(-1)!.next, null);
    const flex = await pages(store, { ...ALL, tier: 'flex', keyId: 'key_1' }, 3);
    assert.deepEqual(flex.flatMap((p) => p.ids), records.filter((r) => r.tier === 'flex' && r.key_id === 'key_1').map((r) => r.id).reverse());
    const s502 = await pages(store, { ...ALL, status: 502 }, 50);
    assert.deepEqual(s502.flatMap((p) => p.ids), ['req-21', 'req-14', 'req-7', 'req-0']);
    const ranged = await pages(store, { fromMs: T0 + 2, toMs: T0 + 4 }, 50);
    assert.deepEqual(ranged.flatMap((p) => p.ids), ['req-11', 'req-10', 'req-9', 'req-8', 'req-7', 'req-6']);
    assert.deepEqual((await store.list({ ...ALL, model: 'nope' }, 5, null)), { records: [], next: null });
  });

  test(`${name}: an organization's filter sees only its own records`, { skip }, async () => {
    const store = await adapter.open();
    await store.insert([rec(1), rec(2, { org_id: 'org_b', key_id: 'key_b' }), rec(3, { org_id: 'org_b', key_id: 'key_b' })]);
    const a = await store.aggregate({ ...ALL, orgId: 'org_a' }, ['key']);
    assert.deepEqual(a.groups.map((g) => [g.key, g.requests]), [['key_1', 1]]);
    assert.deepEqual((await store.list({ ...ALL, orgId: 'org_a', keyId: 'key_b' }, 10, null)).records, []);
    const b = await store.list({ ...ALL, orgId: 'org_b' }, 10, null);
    assert.deepEqual(b.records.map((r) => r.id), ['req-3', 'req-2']);
    const everyone = await store.aggregate(ALL, ['org']);
    assert.deepEqual(everyone.groups.map((g) => [g.org, g.requests]), [['org_a', 1], ['org_b', 2]]);
  });

  test(`${name}: prune deletes what ended before the instant, returns how many, keeps the rest`, { skip }, async () => {
    const store = await adapter.open();
    await store.insert([rec(1, { at_ms: T0 - DAY }), rec(2, { at_ms: T0 - 1 }), rec(3, { at_ms: T0 }), rec(4, { at_ms: T0 + 1 })]);
    assert.equal(await store.prune(T0), 2);
    assert.equal(await store.prune(T0), 0);
    assert.deepEqual((await store.list(ALL, 10, null)).records.map((r) => r.id), ['req-4', 'req-3']);
  });

  test(`${name}: a batch of every size reads back field for field, in the order written`, { skip }, async () => {
    const store = await adapter.open();
    // 19 records: the SQLite adapter writes them as two statements of 8 rows and 3 of one.
    const written = mixed(19).map((r, i) => ({ ...r, at_ms: T0 + i }));
    await store.insert(written);
    const page = await store.list(ALL, 100, null);
    assert.deepEqual(page.records.map(({ seq, ...r }) => r), [...written].reverse());
    const seqs = page.records.map((r) => r.seq as number);
    assert.deepEqual(seqs, [...seqs].sort((x, y) => y - x), 'seq grows in the order written');
  });

  test(`${name}: a batch larger than one statement's parameters is written whole`, { skip }, async () => {
    const store = await adapter.open();
    const many = Array.from({ length: 2_500 }, (_, i) => rec(i, { cost_micro_usd: i }));
    await store.insert(many);
    const { totals } = await store.aggregate(ALL, []);
    assert.equal(totals.requests, 2_500);
    assert.equal(totals.cost_micro_usd, (2_499 * 2_500) / 2);
  });

  test(`${name}: a report past maxGroups throws TooManyGroups; at maxGroups it answers whole`, { skip }, async () => {
    const store = await adapter.open();
    await store.insert(mixed(300));
    const all = await store.aggregate(ALL, ['hour', 'key']);
    const count = all.groups.length;
    assert.ok(count > 10);
    assert.deepEqual(await store.aggregate(ALL, ['hour', 'key'], count), all);
    await assert.rejects(store.aggregate(ALL, ['hour', 'key'], count - 1), (err) => err instanceof TooManyGroups && err.maxGroups === count - 1);
    assert.deepEqual((await store.aggregate(ALL, [], 1)).totals, all.totals, 'totals alone are one group');
  });
}

contract('sqlite', sqliteAdapter(), false);
contract('postgres', postgresAdapter(), pgSkip);

test('the same records give the same reports from both adapters: every dimension, pairs, filters, every page', { skip: pgSkip }, async () => {
  const sq = sqliteAdapter();
  const pa = postgresAdapter();
  try {
    const lite = await sq.open();
    const shared = await pa.open();
    const records = mixed(600);
    for (let i = 0; i < records.length; i += 150) {            // several flushes, as the queue writes them
      await lite.insert(records.slice(i, i + 150));
      await shared.insert(records.slice(i, i + 150));
    }
    const filters: UsageFilter[] = [
      ALL,
      { ...ALL, orgId: 'org_a' },
      { ...ALL, orgId: 'org_b', tier: 'flex' },
      { ...ALL, route: 'cloud_a', status: 200 },
      { ...ALL, model: 'Zeta-1', keyId: 'key_2' },
      { fromMs: T0 + 5 * HOUR, toMs: T0 + 20 * HOUR, orgId: 'org_a' },
    ];
    const dims: Dimension[][] = [[], ...DIMENSIONS.map((d) => [d]), ['day', 'tier'], ['model', 'route'], ['org', 'key', 'status'], ['hour', 'format']];
    let groupsSeen = 0;
    for (const f of filters) {
      for (const g of dims) {
        const a = await lite.aggregate(f, g);
        const b = await shared.aggregate(f, g);
        assert.deepEqual(b, a, `group_by ${g.join(',')} filter ${JSON.stringify(f)}`);
        groupsSeen += a.groups.length;
      }
      for (const limit of [1, 7, 200]) {
        let after: Cursor | null = null;
        do {
          const a = await lite.list(f, limit, after);
          const b = await shared.list(f, limit, after);
          assert.deepEqual(b, a, `page after ${JSON.stringify(after)} limit ${limit}`);
          after = a.next;
        } while (after);
      }
    }
    assert.ok(groupsSeen > 150, `the comparison covered groups (${groupsSeen})`);
    const minus = T0 + 10 * HOUR;
    assert.equal(await shared.prune(minus), await lite.prune(minus));
    assert.deepEqual(await shared.aggregate(ALL, ['day', 'org']), await lite.aggregate(ALL, ['day', 'org']));
  } finally {
    await sq.done();
    await pa.done();
  }
});

test('more records than a slice (lib/usage/sqlite.ts SLICE_ROWS), thousands in one millisecond: both adapters still agree', { skip: pgSkip }, async () => {
  const sq = sqliteAdapter();
  const pa = postgresAdapter();
  try {
    const lite = await sq.open();
    const shared = await pa.open();
    const records = mixed(9_000, 11).map((r, i) => ({ ...r, org_id: i % 3 ? 'org_a' : 'org_b', ...(i < 2_500 ? { at_ms: T0 + 7 * HOUR } : {}) }));
    for (let i = 0; i < records.length; i += 2_000) {
      await lite.insert(records.slice(i, i + 2_000));
      await shared.insert(records.slice(i, i + 2_000));
    }
    for (const f of [ALL, { ...ALL, orgId: 'org_a' }, { ...ALL, orgId: 'org_b', status: 200 }]) {
      for (const g of [[], ['day'], ['hour', 'model'], ['org', 'key', 'status', 'tier']] as Dimension[][]) {
        assert.deepEqual(await shared.aggregate(f, g), await lite.aggregate(f, g), `group_by ${g.join(',')} filter ${JSON.stringify(f)}`);
      }
      for (const limit of [200]) {
        let after: Cursor | null = null;
        let pages = 0;
        do {
          const a = await lite.list(f, limit, after);
          assert.deepEqual(await shared.list(f, limit, after), a);
          after = a.next;
          pages++;
        } while (after);
        assert.ok(pages > 1, `${pages} pages for ${JSON.stringify(f)}`);
      }
    }
    assert.equal((await lite.aggregate(ALL, [])).totals.cost_micro_usd, records.reduce((sum, r) => sum + r.cost_micro_usd, 0));
  } finally {
    await sq.done();
    await pa.done();
  }
});
