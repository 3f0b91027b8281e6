// Organizations, their API keys (stored only as SHA-256 hashes) and their own provider keys
// (sealed with SecretBox). Every read is scoped by org id: no query crosses organizations.
import { randomBytes } from 'node:crypto';
import type { RouteName } from '../ir.ts';
import type { DB } from './db.ts';
import { type SecretBox, sha256 } from './secrets.ts';

export const KEY_PREFIX = 'flex_live_';

export interface ApiKeyRecord { id: string; orgId: string; defaultStartWithin: string | null }

const newId = (prefix: string): string => prefix + randomBytes(12).toString('base64url');

export class OrgStore {
  private readonly q;

  constructor(private readonly db: DB, private readonly box: SecretBox) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS orgs (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS api_keys (
        id TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES orgs(id), hash TEXT NOT NULL UNIQUE,
        default_start_within TEXT, created_at INTEGER NOT NULL, revoked_at INTEGER);
      CREATE TABLE IF NOT EXISTS provider_keys (
        org_id TEXT NOT NULL REFERENCES orgs(id), route TEXT NOT NULL, sealed TEXT NOT NULL,
        updated_at INTEGER NOT NULL, PRIMARY KEY (org_id, route));
    `);
    this.q = {
      insertOrg: db.prepare('INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?)'),
      getOrg: db.prepare('SELECT id, name, created_at FROM orgs WHERE id = ?'),
      insertKey: db.prepare('INSERT INTO api_keys (id, org_id, hash, default_start_within, created_at) VALUES (?, ?, ?, ?, ?)'),
      keyByHash: db.prepare('SELECT id, org_id AS orgId, default_start_within AS defaultStartWithin FROM api_keys WHERE hash = ? AND revoked_at IS NULL'),
      revokeKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      putProviderKey: db.prepare(`INSERT INTO provider_keys (org_id, route, sealed, updated_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (org_id, route) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`),
      getProviderKey: db.prepare('SELECT sealed FROM provider_keys WHERE org_id = ? AND route = ?'),
      listProviderRoutes: db.prepare('SELECT route FROM provider_keys WHERE org_id = ?'),
      deleteProviderKey: db.prepare('DELETE FROM provider_keys WHERE org_id = ? AND route = ?'),
    };
  }

  createOrg(name: string, nowMs: number): { id: string } {
    const id = newId('org_');
    this.q.insertOrg.run(id, name, nowMs);
    return { id };
  }

  orgExists(id: string): boolean { return this.q.getOrg.get(id) !== undefined; }

  /** Issues a key; the clear key is returned once and never stored. */
  createKey(orgId: string, defaultStartWithin: string | null, nowMs: number): { id: string; key: string } {
    const key = KEY_PREFIX + randomBytes(24).toString('base64url');
    const id = newId('key_');
    this.q.insertKey.run(id, orgId, sha256(key), defaultStartWithin, nowMs);
    return { id, key };
  }

  findKey(clearKey: string): ApiKeyRecord | undefined {
    if (!clearKey.startsWith(KEY_PREFIX)) return undefined;
    return this.q.keyByHash.get(sha256(clearKey)) as ApiKeyRecord | undefined;
  }

  revokeKey(keyId: string, nowMs: number): boolean { return this.q.revokeKey.run(nowMs, keyId).changes > 0; }

  /** Stores a provider key (a string, or a cloud credential object) sealed. */
  setProviderKey(orgId: string, route: RouteName, credential: unknown, nowMs: number): void {
    this.q.putProviderKey.run(orgId, route, this.box.seal(JSON.stringify(credential)), nowMs);
  }

  providerKey(orgId: string, route: RouteName): unknown | undefined {
    const row = this.q.getProviderKey.get(orgId, route) as { sealed: string } | undefined;
    return row ? JSON.parse(this.box.open(row.sealed)) : undefined;
  }

  providerRoutes(orgId: string): Set<RouteName> {
    return new Set((this.q.listProviderRoutes.all(orgId) as Array<{ route: RouteName }>).map((r) => r.route));
  }

  deleteProviderKey(orgId: string, route: RouteName): boolean { return this.q.deleteProviderKey.run(orgId, route).changes > 0; }
}
