// The usage queue and store in isolation: a full queue drops (counted in the metric and in one
// log line), never blocks; batches are written in order; close() writes everything left; the
// retention prune deletes only records older than the configured days.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { openDatabase } from '../../lib/store/db.ts';
import { openSqliteUsageStore } from '../../lib/usage/sqlite.ts';
import { Usage, DEFAULT_USAGE } from '../../lib/usage/service.ts';
import { createMetrics } from '../../lib/metrics.ts';
import { ManualClock } from '../../lib/clock.ts';
import type { RequestEnd } from '../../lib/usage/record.ts';

function setup(config: Partial<typeof DEFAULT_USAGE> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'usage-q-'));
  const db = openDatabase(dir);
  const store = openSqliteUsageStore(db);
  const lines: any[] = [];
  const log = pino({ level: 'info' }, new Writable({ write(chunk, _e, cb) { lines.push(JSON.parse(String(chunk))); cb(); } }));
  const metrics = createMetrics();
  const clock = new ManualClock();
  const usage = new Usage(store, { ...DEFAULT_USAGE, flush_interval_ms: 3_600_000, ...config }, metrics, log, clock);
  return {
    usage, store, lines, metrics, clock,
    async done() { await usage.close(); db.close(); rmSync(dir, { recursive: true, force: true }); },
  };
}

const end = (i: number, atMs: number, orgId = 'org_a'): RequestEnd => ({
  id: `req-${i}`, orgId, keyId: 'key_1', startedAt: atMs - 10, endedAt: atMs, format: 'responses', model: 'gpt-5.4',
  status: 200, errorCode: null, costMicroUsd: i, clientClosed: false,
});

const metric = async (m: ReturnType<typeof createMetrics>, name: string): Promise<number> =>
  (await m.registry.getSingleMetric(name)!.get()).values[0]?.value ?? 0;

test('a full queue drops and counts, one warning per flush; queued records are written in order', async () => {
  const s = setup({ queue_capacity: 3, batch_size: 100 });
  const now = s.clock.now();
  const accepted = [0, 1, 2, 3, 4].map((i) => s.usage.queue.push(end(i, now + i)));
  assert.deepEqual(accepted, [true, true, true, false, false]);
  assert.equal(await metric(s.metrics, 'gateway_usage_records_dropped_total'), 2);
  await s.usage.flush();
  const warn = s.lines.filter((l) => l.msg === 'usage queue full: records dropped');
  assert.equal(warn.length, 1);
  assert.equal(warn[0].dropped, 2);
  assert.equal(await metric(s.metrics, 'gateway_usage_records_written_total'), 3);
  const page = await s.store.list({ fromMs: 0, toMs: now + 100 }, 10, null);
  assert.deepEqual(page.records.map((r) => r.id), ['req-2', 'req-1', 'req-0']);
  // room again after the flush
  assert.equal(s.usage.queue.push(end(5, now + 5)), true);
  await s.usage.flush();
  assert.equal(s.lines.filter((l) => l.msg === 'usage queue full: records dropped').length, 1, 'no new drops, no new line');
  await s.done();
});

test('a full batch is written without waiting for the timer; close() writes what is left', async () => {
  const s = setup({ queue_capacity: 100, batch_size: 4 });
  const now = s.clock.now();
  for (let i = 0; i < 4; i++) s.usage.push(end(i, now));
  await new Promise((r) => setImmediate(r));
  await s.usage.flush();
  assert.equal((await s.store.aggregate({ fromMs: 0, toMs: now + 1 }, [])).totals.requests, 4);
  for (let i = 4; i < 7; i++) s.usage.push(end(i, now));
  assert.equal(s.usage.queue.depth, 3);
  await s.usage.queue.close();
  assert.equal((await s.store.aggregate({ fromMs: 0, toMs: now + 1 }, [])).totals.requests, 7);
  await s.done();
});

test('retention: the prune deletes records older than retention_days, keeps the rest', async () => {
  const s = setup({ retention_days: 30 });
  const now = s.clock.now();
  const day = 86_400_000;
  [now - 31 * day, now - 30 * day - 1, now - 30 * day, now - day, now].forEach((at, i) => s.usage.push(end(i, at)));
  await s.usage.flush();
  assert.equal(await s.usage.prune(), 2);
  const left = await s.store.list({ fromMs: 0, toMs: now + 1 }, 10, null);
  assert.deepEqual(left.records.map((r) => r.id), ['req-4', 'req-3', 'req-2']);
  assert.ok(s.lines.some((l) => l.msg === 'usage records pruned' && l.deleted === 2));
  await s.done();
});

test('a record\'s savings are exact: flex tokens priced at standard', async () => {
  const s = setup();
  const { Catalog, DEFAULT_MODELS } = await import('../../lib/catalog/catalog.ts');
  const model = new Catalog(DEFAULT_MODELS).get('gpt-5.4')!;
  const usage = { inputTokens: 1_001, cachedInputTokens: 300, cacheWriteTokens: 0, outputTokens: 777, reasoningTokens: 100 };
  // gpt-5.4 flex: 1.25 / 0.125 / 7.5 USD per 1M; standard: 2.5 / 0.25 / 15
  const flex = Math.ceil(701 * 1.25) + Math.ceil(300 * 0.125) + Math.ceil(777 * 7.5);
  const standard = Math.ceil(701 * 2.5) + Math.ceil(300 * 0.25) + Math.ceil(777 * 15);
  s.usage.push({ ...end(1, s.clock.now()), model, tier: 'flex', servedRoute: 'vendor_a', mode: 'managed', usage, costMicroUsd: flex });
  await s.usage.flush();
  const [r] = (await s.store.list({ fromMs: 0, toMs: s.clock.now() + 1 }, 1, null)).records;
  assert.equal(r!.cost_micro_usd, flex);
  assert.equal(r!.standard_cost_micro_usd, standard);
  assert.equal(r!.reasoning_tokens, 100);
  await s.done();
});
