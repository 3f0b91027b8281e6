// Organizations, their API keys (stored only as SHA-256 hashes) and their own provider keys
// (sealed with SecretBox). Every read is scoped by org id: no query crosses organizations.
import { randomBytes } from 'node:crypto';
import type { RouteName } from '../ir.ts';
import type { DB } from './db.ts';
import { type SecretBox, sha256 } from './secrets.ts';

export const KEY_PREFIX = 'flex_live_';

export interface ApiKeyRecord { id: string; orgId: string; defaultStartWithin: string | null }

const newId = (prefix: string): string => prefix + randomBytes(12).toString('base64url');

/** How long this process trusts a cached key lookup. A revoke or provider-key change made through
 *  this process takes effect at once; one made through another process sharing the data folder,
 *  within this many milliseconds. */
export const KEY_CACHE_MS = 5_000;
const KEY_CACHE_MAX = 100_000;

export class OrgStore {
  private readonly q;
  private readonly keys = new Map<string, { rec: ApiKeyRecord | undefined; at: number }>();
  private readonly providerKeys = new Map<string, { cred: unknown; at: number }>();

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
    const hash = sha256(clearKey);
    const now = Date.now();
    const hit = this.keys.get(hash);
    if (hit && now - hit.at < KEY_CACHE_MS) return hit.rec;
    const rec = this.q.keyByHash.get(hash) as ApiKeyRecord | undefined;
    if (this.keys.size >= KEY_CACHE_MAX) this.keys.clear();
    this.keys.set(hash, { rec, at: now });
    return rec;
  }

  revokeKey(keyId: string, nowMs: number): boolean {
    this.keys.clear();
    return this.q.revokeKey.run(nowMs, keyId).changes > 0;
  }

  /** Stores a provider key (a string, or a cloud credential object) sealed. */
  setProviderKey(orgId: string, route: RouteName, credential: unknown, nowMs: number): void {
    this.providerKeys.delete(orgId + '\0' + route);
    this.q.putProviderKey.run(orgId, route, this.box.seal(JSON.stringify(credential)), nowMs);
  }

  /** The org's own key for a route, decrypted (cached briefly in memory, never written anywhere). */
  providerKey(orgId: string, route: RouteName): unknown | undefined {
    const k = orgId + '\0' + route;
    const now = Date.now();
    const hit = this.providerKeys.get(k);
    if (hit && now - hit.at < KEY_CACHE_MS) return hit.cred;
    const row = this.q.getProviderKey.get(orgId, route) as { sealed: string } | undefined;
    const cred = row ? JSON.parse(this.box.open(row.sealed)) : undefined;
    if (this.providerKeys.size >= KEY_CACHE_MAX) this.providerKeys.clear();
    this.providerKeys.set(k, { cred, at: now });
    return cred;
  }

  providerRoutes(orgId: string): Set<RouteName> {
    return new Set((this.q.listProviderRoutes.all(orgId) as Array<{ route: RouteName }>).map((r) => r.route));
  }

  deleteProviderKey(orgId: string, route: RouteName): boolean {
    this.providerKeys.delete(orgId + '\0' + route);
    return this.q.deleteProviderKey.run(orgId, route).changes > 0;
  }
}
