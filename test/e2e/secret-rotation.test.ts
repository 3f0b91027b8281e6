// Rotating GATEWAY_SECRET_KEY, on SQLite and on PostgreSQL: the real gateway restarted on one
// store with each secret setting an operator would use. A start whose secret opens none of the
// stored provider keys is refused; with the old secret in GATEWAY_SECRET_KEY_PREVIOUS every key
// still opens; the reseal endpoint seals them again with the new one, after which the old secret
// can go; a key nobody's secret opens fails its own requests with provider_key_unreadable, not an
// internal error.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../../lib/config.ts';
import { createGateway, type Gateway } from '../../lib/app.ts';
import { createLogger } from '../../lib/log.ts';
import { SecretBox } from '../../lib/store/secrets.ts';
import { assertNoSecrets } from '../helpers/gateway.ts';
import { sealedKeyHelpers, storeQuery } from '../helpers/sealed-keys.ts';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../helpers/postgres.ts';

const ADMIN = 'rotation-admin-token';
const OLD = 'old-secret-3f9a0c', NEW = 'new-secret-81d2e7', LOST = 'lost-secret-55b0aa';

for (const store of ['sqlite', 'postgres'] as const) {
  describe(store, { skip: store === 'postgres' && !(await postgresReachable()) ? 'PostgreSQL not reachable' : false }, () => {
    let dataDir: string;
    let db: TestDatabase | undefined;
    const logLines: string[] = [];
    const secrets = new Set([ADMIN, OLD, NEW, LOST]);

    before(async () => {
      // Not 'gw-rotation-': the log names the data folder, and assertNoSecrets looks for the admin
      // token's first 10 characters ('rotation-a'), which a random suffix starting with 'a' made.
      dataDir = mkdtempSync(join(tmpdir(), 'gw-rekey-'));
      if (store === 'postgres') db = await createTestDatabase('secret_rotation');
    });
    after(async () => {
      rmSync(dataDir, { recursive: true, force: true });
      await db?.drop();
      assertNoSecrets(logLines, secrets);
    });

    const start = (secret: string, previousSecrets: string[] = []): Promise<Gateway> => createGateway({
      config: loadConfig(undefined, {}), dataDir, databaseUrl: db?.url, adminToken: ADMIN, secret, previousSecrets, port: 0,
      logger: createLogger('debug', new Writable({ write(chunk, _e, cb) { logLines.push(String(chunk)); cb(); } })),
      drainMs: 1_000,
    });
    const { admin, ownKeyOrg, serve } = sealedKeyHelpers(ADMIN, secrets);

    let a: Awaited<ReturnType<typeof ownKeyOrg>>, c: Awaited<ReturnType<typeof ownKeyOrg>>;

    test('a start whose secret opens none of the stored provider keys is refused', async () => {
      const gw = await start(OLD);
      a = await ownKeyOrg(gw, 'vendor_a');
      c = await ownKeyOrg(gw, 'vendor_c');
      assert.equal((await serve(gw, a)).status, 200);
      await gw.close();
      await assert.rejects(start(NEW), /opens none of the 2 stored provider keys/);
    });

    test('with the old secret as previous, every key opens; reseal moves them to the new one', async () => {
      let gw = await start(NEW, [OLD]);
      assert.equal((await serve(gw, a)).status, 200);
      assert.equal((await serve(gw, c)).status, 200);
      const fresh = await ownKeyOrg(gw, 'vendor_a'); // sealed with the new secret at once
      assert.deepEqual((await admin(gw, 'POST', '/admin/v1/provider-keys/reseal')).json, { resealed: 2, current: 1, changed: 0, unreadable: [] });
      assert.deepEqual((await admin(gw, 'POST', '/admin/v1/provider-keys/reseal')).json, { resealed: 0, current: 3, changed: 0, unreadable: [] });
      await gw.close();
      // The old secret retired: everything still opens; the old secret alone now opens nothing.
      gw = await start(NEW);
      for (const o of [a, c, fresh]) assert.equal((await serve(gw, o)).status, 200);
      await gw.close();
      await assert.rejects(start(OLD), /opens none of the 3 stored provider keys/);
    });

    test('a start with a previous secret dropped mid-reseal says how many keys do not open; a restart decides the same', async () => {
      // 40 more keys under OLD (a process still sealing with it), then the first 10 in key order
      // moved to NEW as a reseal cut short would leave them.
      let gw = await start(OLD, [NEW]);
      for (let i = 0; i < 40; i++) await ownKeyOrg(gw, 'vendor_a');
      await gw.close();
      const box = new SecretBox(NEW, [OLD]);
      const first = `SELECT org_id, route, sealed FROM provider_keys ORDER BY org_id, route LIMIT 10`;
      const set = 'UPDATE provider_keys SET sealed = $1 WHERE org_id = $2 AND route = $3';
      let moved = 0;
      for (const row of await storeQuery({ dataDir, url: db?.url }, first)) {
        const to = box.resealed(row.sealed);
        if (to) { moved++; await storeQuery({ dataDir, url: db?.url }, set, [to, row.org_id, row.route]); }
      }
      const warning = `${40 - moved} of 43 stored provider keys do not open`;
      for (let i = 0; i < 2; i++) {
        const from = logLines.length;
        gw = await start(NEW);
        assert.ok(logLines.slice(from).some((l) => l.includes(warning)), `${warning}, at every start`);
        await gw.close();
      }
      gw = await start(NEW, [OLD]);   // the previous secret restored: every key opens again
      assert.equal((await serve(gw, a)).status, 200);
      assert.equal((await admin(gw, 'POST', '/admin/v1/provider-keys/reseal')).json.resealed, 40 - moved);
      await gw.close();
    });

    test('a key sealed by a lost secret fails its own requests with provider_key_unreadable; the rest serve', async () => {
      // A process that sealed with a secret since lost (it had the current one as previous).
      let gw = await start(LOST, [NEW]);
      const lost = await ownKeyOrg(gw, 'vendor_c');
      await gw.close();
      gw = await start(NEW);
      assert.ok(logLines.some((l) => /1 of \d+ stored provider keys do not open/.test(l)), 'the start says so');
      assert.deepEqual(await serve(gw, lost), { status: 500, code: 'provider_key_unreadable' });
      assert.equal((await serve(gw, a)).status, 200);
      const report = (await admin(gw, 'POST', '/admin/v1/provider-keys/reseal')).json;
      assert.deepEqual(report.unreadable, [{ org_id: lost.org, route: 'vendor_c' }]);
      // Setting the key again is the fix.
      assert.equal((await admin(gw, 'PUT', `/admin/v1/orgs/${lost.org}/provider-keys/vendor_c`, { key: 'own-vendor_c-again' })).status, 200);
      assert.equal((await serve(gw, lost)).status, 200);
      await gw.close();
    });
  });
}
