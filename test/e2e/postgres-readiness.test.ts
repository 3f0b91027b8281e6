// /readyz on PostgreSQL says whether the database answers, not whether the gateway's pool has a free
// connection: a burst that holds every pooled connection (admissions, a usage report) must not turn
// a healthy instance unready, and an unreachable database still must (test/e2e/shared-ledger.test.ts).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type pg from 'pg';
import { loadConfig } from '../../lib/config.ts';
import { createGateway } from '../../lib/app.ts';
import { createLogger } from '../../lib/log.ts';
import { createTestDatabase, postgresReachable } from '../helpers/postgres.ts';

const skip = (await postgresReachable()) ? false : 'PostgreSQL not reachable';
const cleanups: Array<() => Promise<void> | void> = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

test('every pooled connection busy, the database up: /readyz answers ready at once', { skip }, async () => {
  const db = await createTestDatabase('readiness');
  cleanups.push(() => db.drop());
  const dir = mkdtempSync(join(tmpdir(), 'gw-ready-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const gw = await createGateway({
    config: loadConfig(undefined, {}), dataDir: dir, databaseUrl: db.url, adminToken: 'readiness-admin', secret: 'readiness-secret',
    port: 0, logger: createLogger('silent', new Writable({ write(_c, _e, cb) { cb(); } })), drainMs: 500,
  });
  cleanups.push(() => gw.close());
  assert.equal((await fetch(`${gw.url}/readyz`)).status, 200);
  const pool = (gw.services.store as { pool: pg.Pool }).pool;
  let ended = 0;
  const busy = Array.from({ length: pool.options.max }, () => pool.query('SELECT pg_sleep(4)').finally(() => { ended++; }));
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(pool.totalCount === pool.options.max && pool.idleCount === 0, 'the pool is saturated');
  const ready = await fetch(`${gw.url}/readyz`);
  assert.equal(ready.status, 200, await ready.text());
  assert.equal(ended, 0, 'answered while every pooled connection was still busy');
  await Promise.all(busy);
});
