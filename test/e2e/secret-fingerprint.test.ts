// Several gateways on one store, each publishing the fingerprint of the secret it seals provider
// keys with: a process started with a mistyped GATEWAY_SECRET_KEY (and the right previous one, so
// the start check passes) says so at start and cannot reseal every key with its typo over the
// other processes; the rolling rotation of README "Rotating GATEWAY_SECRET_KEY" still works, its
// reseal refused only until the last process has restarted with the new secret.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../../lib/config.ts';
import { createGateway, type Gateway } from '../../lib/app.ts';
import { createLogger } from '../../lib/log.ts';
import { runCli } from '../../lib/cli.ts';
import { sealFingerprint } from '../../lib/store/secrets.ts';
import { assertNoSecrets } from '../helpers/gateway.ts';
import { sealedKeyHelpers, storeQuery, type SharedStore } from '../helpers/sealed-keys.ts';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../helpers/postgres.ts';

const ADMIN = 'rotation-check-admin-token';
const OLD = 'old-secret-a41c07', NEW = 'new-secret-6be2d9', TYPO = 'new-secret-6be2d8', NEXT = 'next-secret-0f93c1';

for (const store of ['sqlite', 'postgres'] as const) {
  describe(store, { skip: store === 'postgres' && !(await postgresReachable()) ? 'PostgreSQL not reachable' : false }, () => {
    let dataDir: string;
    let db: TestDatabase | undefined;
    const logs = new Map<Gateway, string[]>();
    const secrets = new Set([ADMIN, OLD, NEW, TYPO, NEXT]);

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'gw-seal-peers-'));
      if (store === 'postgres') db = await createTestDatabase('secret_fingerprint');
    });
    after(async () => {
      rmSync(dataDir, { recursive: true, force: true });
      await db?.drop();
      assertNoSecrets([...logs.values()].flat(), secrets);
    });

    /** A gateway on the shared store, its log kept apart from the others'. */
    const start = async (secret: string, previousSecrets: string[] = []): Promise<Gateway> => {
      const lines: string[] = [];
      const gw = await createGateway({
        config: loadConfig(undefined, {}), dataDir, databaseUrl: db?.url, adminToken: ADMIN, secret, previousSecrets, port: 0,
        logger: createLogger('debug', new Writable({ write(chunk, _e, cb) { lines.push(String(chunk)); cb(); } })),
        drainMs: 1_000,
      });
      logs.set(gw, lines);
      return gw;
    };
    const warned = (gw: Gateway, text: string): boolean => logs.get(gw)!.some((line) => line.includes(text));
    const { admin, ownKeyOrg, serve } = sealedKeyHelpers(ADMIN, secrets);
    const where = (): SharedStore => ({ dataDir, url: db?.url });
    /** Every stored sealed provider key, as the database holds it. */
    const sealed = async (): Promise<string[]> =>
      (await storeQuery(where(), 'SELECT sealed FROM provider_keys ORDER BY org_id, route')).map((row) => row.sealed);

    test('a process with a mistyped secret says so at start and cannot reseal over the others', async () => {
      const first = await start(OLD);
      const a = await ownKeyOrg(first, 'vendor_a');
      const c = await ownKeyOrg(first, 'vendor_c');
      await first.close();
      // Step 1 of the rotation, one process with a typo in the new secret: the previous secret
      // opens every key, so the start check cannot tell.
      const good = await start(NEW, [OLD]);
      const typo = await start(TYPO, [OLD]);
      assert.ok(warned(typo, '1 of the 1 other running processes seal provider keys with a secret this process has neither'), 'said at start');

      const listed = await admin(typo, 'GET', '/admin/v1/processes');
      assert.equal(listed.status, 200);
      assert.equal(listed.json.seal_fingerprint, sealFingerprint(TYPO));
      assert.deepEqual(listed.json.data.map((p: any) => [p.seal_fingerprint, p.same_secret, p.self]).sort(),
        [[sealFingerprint(NEW), false, false], [sealFingerprint(TYPO), true, true]].sort());
      const cliList = await runCli(['processes'], { GATEWAY_URL: typo.url, GATEWAY_ADMIN_TOKEN: ADMIN });
      assert.equal(JSON.parse(cliList.body).data.length, 2);

      const before = await sealed();
      const refused = await admin(typo, 'POST', '/admin/v1/provider-keys/reseal');
      assert.equal(refused.status, 409);
      assert.equal(refused.json.error.code, 'secret_mismatch');
      assert.match(refused.json.error.message, /1 of the 1 other running processes seal provider keys with a different GATEWAY_SECRET_KEY/);
      assert.deepEqual(await sealed(), before, 'nothing resealed');
      // The CLI says the same and fails.
      const cli = await runCli(['reseal'], { GATEWAY_URL: good.url, GATEWAY_ADMIN_TOKEN: ADMIN });
      assert.equal(cli.status, 409);
      assert.match(cli.body, /secret_mismatch/);
      for (const o of [a, c]) assert.equal((await serve(good, o)).status, 200, 'the others still open their keys');

      // The process with the typo stopped: the reseal goes through at once.
      await typo.close();
      assert.deepEqual((await admin(good, 'POST', '/admin/v1/provider-keys/reseal')).json, { resealed: 2, current: 0, changed: 0, unreadable: [] });
      for (const o of [a, c]) assert.equal((await serve(good, o)).status, 200);
      await good.close();
    });

    test('the rolling rotation: the reseal waits for the last restart, then every process opens every key', async () => {
      // Two processes on NEW (the secret the previous test left every key sealed with).
      const p1 = await start(NEW);
      const p2 = await start(NEW);
      assert.ok(!warned(p2, 'other running processes seal'), 'the same secret: nothing to say');
      const k = await ownKeyOrg(p1, 'vendor_a');
      await p1.close();
      const q1 = await start(NEXT, [NEW]);
      assert.ok(warned(q1, "1 of the 1 other running processes seal provider keys with this process's GATEWAY_SECRET_KEY_PREVIOUS"));
      // Too early: p2 seals with NEW only and could open no resealed key.
      const early = await admin(q1, 'POST', '/admin/v1/provider-keys/reseal');
      assert.equal(early.status, 409);
      assert.match(early.json.error.message, /with this process's GATEWAY_SECRET_KEY_PREVIOUS: not restarted yet/);
      assert.equal((await serve(p2, k)).status, 200);
      await p2.close();
      const q2 = await start(NEXT, [NEW]);
      assert.ok(!warned(q2, 'other running processes seal'), 'every running process on the new secret');
      const resealed = await admin(q1, 'POST', '/admin/v1/provider-keys/reseal');
      assert.equal(resealed.status, 200);
      assert.ok(resealed.json.resealed >= 1);
      for (const gw of [q1, q2]) assert.equal((await serve(gw, k)).status, 200);
      await q1.close();
      await q2.close();
      const done = await start(NEXT);   // the previous secret retired
      assert.equal((await serve(done, k)).status, 200);
      await done.close();
    });

    test('a running process of an earlier build, which does not say which secret it seals with, stops the reseal too', async () => {
      const gw = await start(NEXT);
      // Its row as an earlier build writes it: no fingerprint.
      await storeQuery(where(), 'INSERT INTO ledger_processes (process_id, instance_id, host, pid, heartbeat_at_ms) VALUES ($1, $2, $3, $4, $5)',
        ['earlier-build', 'elsewhere:8080', 'elsewhere', 4242, Date.now()]);
      const refused = await admin(gw, 'POST', '/admin/v1/provider-keys/reseal');
      assert.equal(refused.status, 409);
      assert.match(refused.json.error.message, /1 run an earlier build that does not say which secret it seals with/);
      const listed = (await admin(gw, 'GET', '/admin/v1/processes')).json.data.find((p: any) => p.process_id === 'earlier-build');
      assert.deepEqual([listed.seal_fingerprint, listed.same_secret], [null, null]);
      await storeQuery(where(), 'DELETE FROM ledger_processes WHERE process_id = $1', ['earlier-build']);   // it stopped long ago
      assert.equal((await admin(gw, 'POST', '/admin/v1/provider-keys/reseal')).status, 200);
      await gw.close();
    });
  });
}
