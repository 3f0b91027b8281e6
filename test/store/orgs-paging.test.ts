// The organization list a page at a time (GET /admin/v1/orgs), on each store: pages read from the
// store in (created_at, id) order walk every organization once, ties of one millisecond included,
// and a cursor naming no organization is told apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../lib/store/db.ts';
import { OrgStore } from '../../lib/store/orgs.ts';
import { SecretBox } from '../../lib/store/secrets.ts';
import { sqliteOrgRows } from '../../lib/store/sqlite-orgs.ts';
import { postgresOrgRows } from '../../lib/store/postgres-orgs.ts';
import { createTestDatabase, postgresReachable, testPool } from '../helpers/postgres.ts';

async function walk(store: OrgStore): Promise<void> {
  // 30 organizations over three milliseconds: ten ties each.
  for (let i = 0; i < 30; i++) await store.createOrg(`org ${i}`, 1_000 + Math.floor(i / 10));
  const every = (await store.listOrgs()).map((o) => o.id);
  const paged: string[] = [];
  let after: string | null = null;
  for (;;) {
    const found = await store.orgsPage(after, 4);
    assert.ok(found);
    paged.push(...found.page.map((o) => o.id));
    if (!found.more) break;
    after = found.page.at(-1)!.id;
  }
  assert.deepEqual(paged, every);
  assert.equal(await store.orgsPage('org_nosuchorganization', 4), undefined);
}

test('SQLite: pages walk every organization once, in the list\'s order', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'orgs-paging-'));
  const db = openDatabase(dir);
  try {
    await walk(new OrgStore(sqliteOrgRows(db), new SecretBox('s')));
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('PostgreSQL: pages walk every organization once, in the list\'s order', { skip: !(await postgresReachable()) && 'PostgreSQL not reachable' }, async () => {
  const pgdb = await createTestDatabase('orgs_paging', { migrated: true });
  const pool = testPool(pgdb.url);
  try {
    await walk(new OrgStore(postgresOrgRows(pool), new SecretBox('s')));
  } finally {
    await pool.end();
    await pgdb.drop();
  }
});
