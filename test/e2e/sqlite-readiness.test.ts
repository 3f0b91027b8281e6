// /readyz of a gateway on SQLite says when nothing can be written or the file is not the one it
// opened, and the operator's ledger writes answer 503 store_unavailable (retryable) instead of 500.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, openSync, writeSync, closeSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const readyz = async (g: TestGateway): Promise<{ status: number; body: unknown }> => {
  const res = await fetch(`${g.url}/readyz`);
  return { status: res.status, body: await res.json() };
};
const logged = (g: TestGateway, text: string): boolean => g.logLines.some((l) => l.includes(text));

test('a file that takes no write makes /readyz degraded (unwritable) and the ledger\'s admin writes 503 store_unavailable, until it takes one', async () => {
  // Simulated time: /readyz tries its write at most once a second and answers the last result between.
  const g = await startTestGateway({ simulatedTime: true });
  try {
    const { orgId } = await g.newOrg({ balance: 1_000_000 });
    assert.equal((await readyz(g)).status, 200);
    // The gateway's own connection refuses writes, as a read-only file or a full disk does.
    g.gw.services.store.sqlite!.pragma('query_only = ON');
    assert.equal((await readyz(g)).status, 200, 'within the second, the last probe stands');
    g.clock!.increment(1_000);
    const topup = await g.admin('POST', `/admin/v1/orgs/${orgId}/topups`, { cash_micro_usd: 1 });
    assert.equal(topup.status, 503);
    assert.equal(topup.json.error.code, 'store_unavailable');
    for (const [method, path, body] of [
      ['PUT', 'overrides', { concurrency: 3 }], ['POST', 'review', undefined], ['DELETE', 'review', undefined], ['PUT', 'exempt', { exempt: true }],
    ] as const) {
      const res = await g.admin(method, `/admin/v1/orgs/${orgId}/${path}`, body);
      assert.equal(res.status, 503, `${method} ${path}`);
      assert.equal(res.json.error.code, 'store_unavailable');
    }
    assert.deepEqual(await readyz(g), { status: 503, body: { status: 'degraded', database: 'unwritable', store: 'sqlite' } });
    assert.ok(logged(g, 'cannot be written: /readyz is degraded until a write succeeds'));
    assert.ok(logged(g, '"code":"SQLITE_READONLY"'));

    g.gw.services.store.sqlite!.pragma('query_only = OFF');
    g.clock!.increment(1_000);
    assert.deepEqual(await readyz(g), { status: 200, body: { status: 'ready' } }, 'a write goes through again');
    assert.ok(logged(g, 'is written again'));
    assert.equal((await g.admin('POST', `/admin/v1/orgs/${orgId}/topups`, { cash_micro_usd: 1 })).status, 200);
  } finally {
    g.gw.services.store.sqlite!.pragma('query_only = OFF');
    await g.close();
  }
});

test('the data folder deleted, gateway.db replaced or its WAL deleted under a running gateway: /readyz degraded, the path logged', async () => {
  for (const [what, expected, act] of [
    ['folder deleted', 'deleted', (dir: string) => rmSync(dir, { recursive: true })],
    ['gateway.db replaced', 'replaced', (dir: string) => {
      copyFileSync(join(dir, 'gateway.db'), join(dir, 'restored.db'));
      renameSync(join(dir, 'restored.db'), join(dir, 'gateway.db'));
    }],
    ['WAL deleted', 'deleted', (dir: string) => rmSync(join(dir, 'gateway.db-wal'))],
  ] as const) {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-readiness-'));
    const g = await startTestGateway({ dataDir });
    try {
      await g.newOrg({ balance: 1_000_000 });
      assert.equal((await readyz(g)).status, 200, what);
      act(dataDir);
      assert.deepEqual(await readyz(g), { status: 503, body: { status: 'degraded', database: expected, store: 'sqlite' } }, what);
      assert.ok(logged(g, `was ${expected} while this process runs`), what);
      assert.ok(logged(g, dataDir), `${what}: the log names the file`);
    } finally {
      await g.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
});

test('a damaged table found at run time is logged by name and makes /readyz degraded (damaged)', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-readiness-damaged-'));
  try {
    let orgId: string;
    {
      const g = await startTestGateway({ dataDir });
      ({ orgId } = await g.newOrg({ balance: 1_000_000 }));
      await g.close();
    }
    const file = join(dataDir, 'gateway.db');
    const db = new Database(file);
    const page = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'ledger_orgs'").pluck().get() as number;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    db.close();
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(16, 7), 0, 16, (page - 1) * pageSize);   // the table's root page header
    closeSync(fd);

    const g = await startTestGateway({ dataDir });
    try {
      assert.equal((await g.admin('GET', `/admin/v1/orgs/${orgId}/ledger`)).status, 500);
      assert.deepEqual(await readyz(g), { status: 503, body: { status: 'degraded', database: 'damaged', store: 'sqlite' } });
      assert.ok(logged(g, `${file} is damaged: restore it from a backup`));
      assert.ok(logged(g, '"code":"SQLITE_CORRUPT'));
    } finally {
      await g.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
