// Organizations, their API keys (stored only as SHA-256 hashes) and their own provider keys
// (sealed with SecretBox). Every read is scoped by org id: no query crosses organizations.
import { randomBytes } from 'node:crypto';
import type { RouteName } from '../ir.ts';
import type { DB } from './db.ts';
import { type SecretBox, sha256 } from './secrets.ts';

export const KEY_PREFIX = 'flex_live_';

/** What a key may do (docs/usage.md "Scopes"): every key runs inference and reads its own
 *  organization's usage and limits; only a key with `manage` may create or revoke keys and set
 *  provider keys through /v1/organization/…. */
export type Scope = 'inference' | 'manage';
export const SCOPES: Scope[] = ['inference', 'manage'];

export interface ApiKeyRecord { id: string; orgId: string; defaultStartWithin: string | null; scopes: string }

export interface ApiKeyInfo { id: string; scopes: Scope[]; default_start_within: string | null; created_at: number; revoked_at: number | null }

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
    // Scopes came with the management API: older files get the column, their keys stay inference-only.
    const cols = db.prepare('PRAGMA table_info(api_keys)').all() as Array<{ name: string }>;
    if (!cols.some((c) => c.name === 'scopes')) db.exec("ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'inference'");
    this.q = {
      insertOrg: db.prepare('INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?)'),
      getOrg: db.prepare('SELECT id, name, created_at FROM orgs WHERE id = ?'),
      listOrgs: db.prepare('SELECT id, name, created_at FROM orgs ORDER BY created_at, id'),
      insertKey: db.prepare('INSERT INTO api_keys (id, org_id, hash, default_start_within, created_at, scopes) VALUES (?, ?, ?, ?, ?, ?)'),
      keyByHash: db.prepare('SELECT id, org_id AS orgId, default_start_within AS defaultStartWithin, scopes FROM api_keys WHERE hash = ? AND revoked_at IS NULL'),
      revokeKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      revokeOrgKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND org_id = ? AND revoked_at IS NULL'),
      listKeys: db.prepare('SELECT id, scopes, default_start_within, created_at, revoked_at FROM api_keys WHERE org_id = ? ORDER BY created_at DESC, id'),
      listProviderKeys: db.prepare('SELECT route, updated_at FROM provider_keys WHERE org_id = ? ORDER BY route'),
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

  org(id: string): { id: string; name: string; created_at: number } | undefined {
    return this.q.getOrg.get(id) as { id: string; name: string; created_at: number } | undefined;
  }

  listOrgs(): Array<{ id: string; name: string; created_at: number }> {
    return this.q.listOrgs.all() as Array<{ id: string; name: string; created_at: number }>;
  }

  /** Issues a key; the clear key is returned once and never stored. */
  createKey(orgId: string, defaultStartWithin: string | null, nowMs: number, scopes: Scope[] = ['inference']): { id: string; key: string; scopes: Scope[] } {
    const key = KEY_PREFIX + randomBytes(24).toString('base64url');
    const id = newId('key_');
    const sorted = SCOPES.filter((s) => s === 'inference' || scopes.includes(s));
    this.q.insertKey.run(id, orgId, sha256(key), defaultStartWithin, nowMs, sorted.join(' '));
    return { id, key, scopes: sorted };
  }

  /** The org's keys, newest first: ids and metadata only (the clear key is never stored). */
  listKeys(orgId: string): ApiKeyInfo[] {
    return (this.q.listKeys.all(orgId) as Array<Omit<ApiKeyInfo, 'scopes'> & { scopes: string }>)
      .map((k) => ({ ...k, scopes: k.scopes.split(' ') as Scope[] }));
  }

  /** Revokes a key of this organization only (another org's key id is "not found"). */
  revokeOrgKey(orgId: string, keyId: string, nowMs: number): boolean {
    this.keys.clear();
    return this.q.revokeOrgKey.run(nowMs, keyId, orgId).changes > 0;
  }

  /** Routes with an own key and when it was last set; never the key. */
  listProviderKeys(orgId: string): Array<{ route: RouteName; updated_at: number }> {
    return this.q.listProviderKeys.all(orgId) as Array<{ route: RouteName; updated_at: number }>;
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
