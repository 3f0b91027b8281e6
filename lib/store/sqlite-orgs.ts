// The org rows in the embedded SQLite file (prepared once; every read answers synchronously). A
// write waits for another connection's write lock briefly, the event loop free between tries
// (lib/sqlite-lock.ts); past that it fails and the caller answers 503 store_unavailable (orgs.ts).
import type { RouteName } from '../routes.ts';
import type { DB } from './db.ts';
import { retryWhileLocked } from '../sqlite-lock.ts';
import { storedRoutes, type ApiKeyRecord, type KeyRow, type OrgInfo, type OrgRows, type SealedChange, type SealedKey, type SealedKeyId } from './orgs.ts';

export function sqliteOrgRows(db: DB): OrgRows {
  db.exec(`
    CREATE TABLE IF NOT EXISTS orgs (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS api_keys (
      id TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES orgs(id), hash TEXT NOT NULL UNIQUE,
      default_start_within TEXT, created_at INTEGER NOT NULL, revoked_at INTEGER);
    CREATE TABLE IF NOT EXISTS provider_keys (
      org_id TEXT NOT NULL REFERENCES orgs(id), route TEXT NOT NULL, sealed TEXT NOT NULL,
      updated_at INTEGER NOT NULL, PRIMARY KEY (org_id, route));
    CREATE INDEX IF NOT EXISTS orgs_by_creation ON orgs (created_at, id);
  `);
  // Scopes came with the management API: older files get the column, their keys stay inference-only.
  const columns = db.prepare('PRAGMA table_info(api_keys)').all() as Array<{ name: string }>;
  if (!columns.some((column) => column.name === 'scopes')) {
    db.exec("ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'inference'");
  }
  // An agent key's default route chain came later: older keys have none.
  if (!columns.some((column) => column.name === 'default_provider')) db.exec('ALTER TABLE api_keys ADD COLUMN default_provider TEXT');
  const statements = {
    insertOrg: db.prepare('INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?)'),
    getOrg: db.prepare('SELECT id, name, created_at FROM orgs WHERE id = ?'),
    listOrgs: db.prepare('SELECT id, name, created_at FROM orgs ORDER BY created_at, id'),
    orgsAfter: db.prepare('SELECT id, name, created_at FROM orgs WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?'),
    insertKey: db.prepare(`INSERT INTO api_keys (id, org_id, hash, default_start_within, default_provider, created_at, scopes)
      VALUES (?, ?, ?, ?, ?, ?, ?)`),
    keyByHash: db.prepare(`
      SELECT id, org_id AS orgId, default_start_within AS defaultStartWithin, default_provider AS defaultProvider, scopes
      FROM api_keys WHERE hash = ? AND revoked_at IS NULL`),
    revokeKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING hash').pluck(),
    revokeOrgKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND org_id = ? AND revoked_at IS NULL RETURNING hash').pluck(),
    listKeys: db.prepare(`
      SELECT id, scopes, default_start_within, default_provider, created_at, revoked_at
      FROM api_keys WHERE org_id = ? ORDER BY created_at DESC, id`),
    listProviderKeys: db.prepare('SELECT route, updated_at FROM provider_keys WHERE org_id = ? ORDER BY route'),
    putProviderKey: db.prepare(`INSERT INTO provider_keys (org_id, route, sealed, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (org_id, route) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`),
    getProviderKey: db.prepare('SELECT sealed FROM provider_keys WHERE org_id = ? AND route = ?').pluck(),
    listProviderRoutes: db.prepare('SELECT route FROM provider_keys WHERE org_id = ?').pluck(),
    deleteProviderKey: db.prepare('DELETE FROM provider_keys WHERE org_id = ? AND route = ?'),
    sealedKeys: db.prepare('SELECT org_id, route, sealed FROM provider_keys WHERE (org_id, route) > (?, ?) ORDER BY org_id, route LIMIT ?'),
    replaceSealed: db.prepare('UPDATE provider_keys SET sealed = ? WHERE org_id = ? AND route = ? AND sealed = ?'),
  };
  // A reseal's page in one transaction: one commit, not one per key.
  const replaceSealed = db.transaction((changes: SealedChange[]): SealedKeyId[] =>
    changes.filter((c) => statements.replaceSealed.run(c.to, c.org_id, c.route, c.from).changes > 0)
      .map(({ org_id, route }) => ({ org_id, route })));
  return {
    insertOrg: (id, name, nowMs) => retryWhileLocked(() => { statements.insertOrg.run(id, name, nowMs); }),
    orgExists: (id) => statements.getOrg.get(id) !== undefined,
    org: (id) => statements.getOrg.get(id) as OrgInfo | undefined,
    listOrgs: () => statements.listOrgs.all() as OrgInfo[],
    orgsAfter: (after, limit) => statements.orgsAfter.all(after?.created_at ?? -1, after?.id ?? '', limit) as OrgInfo[],
    insertKey: (id, orgId, hash, defaults, nowMs, scopes) => retryWhileLocked(() => {
      statements.insertKey.run(id, orgId, hash, defaults.startWithin, storedRoutes(defaults.provider), nowMs, scopes);
    }),
    keyByHash: (hash) => statements.keyByHash.get(hash) as ApiKeyRecord | undefined,
    listKeys: (orgId) => statements.listKeys.all(orgId) as KeyRow[],
    revokeKey: (keyId, nowMs) => retryWhileLocked(() => statements.revokeKey.get(nowMs, keyId) as string | undefined),
    revokeOrgKey: (orgId, keyId, nowMs) => retryWhileLocked(() => statements.revokeOrgKey.get(nowMs, keyId, orgId) as string | undefined),
    listProviderKeys: (orgId) => statements.listProviderKeys.all(orgId) as Array<{ route: RouteName; updated_at: number }>,
    putProviderKey: (orgId, route, sealed, nowMs) => retryWhileLocked(() => { statements.putProviderKey.run(orgId, route, sealed, nowMs); }),
    providerKey: (orgId, route) => statements.getProviderKey.get(orgId, route) as string | undefined,
    providerRoutes: (orgId) => statements.listProviderRoutes.all(orgId) as RouteName[],
    deleteProviderKey: (orgId, route) => retryWhileLocked(() => statements.deleteProviderKey.run(orgId, route).changes > 0),
    sealedProviderKeys: (after, limit) => statements.sealedKeys.all(after?.org_id ?? '', after?.route ?? '', limit) as SealedKey[],
    replaceSealed: (changes) => retryWhileLocked(() => replaceSealed(changes)),
  };
}
