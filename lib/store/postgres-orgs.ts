// The org rows in the shared PostgreSQL database. A revocation or a provider-key change notifies
// every process (channel `gateway_cache`) in the same statement as the write, so the others drop
// their cached lookup as the transaction commits (postgres.ts listens).
import type { Pool } from 'pg';
import type { RouteName } from '../routes.ts';
import { storedRoutes, type ApiKeyRecord, type KeyRow, type OrgInfo, type OrgRows, type SealedKey, type SealedKeyId } from './orgs.ts';

export const CACHE_CHANNEL = 'gateway_cache';

export function postgresOrgRows(pool: Pool): OrgRows {
  return {
    async insertOrg(id, name, nowMs) {
      await pool.query('INSERT INTO orgs (id, name, created_at) VALUES ($1, $2, $3)', [id, name, nowMs]);
    },
    async orgExists(id) {
      return (await pool.query('SELECT 1 FROM orgs WHERE id = $1', [id])).rowCount! > 0;
    },
    async org(id) {
      return (await pool.query<OrgInfo>('SELECT id, name, created_at FROM orgs WHERE id = $1', [id])).rows[0];
    },
    async listOrgs() {
      return (await pool.query<OrgInfo>('SELECT id, name, created_at FROM orgs ORDER BY created_at, id')).rows;
    },
    async orgsAfter(after, limit) {
      return (await pool.query<OrgInfo>(`
        SELECT id, name, created_at FROM orgs WHERE (created_at, id) > ($1, $2) ORDER BY created_at, id LIMIT $3`,
      [after?.created_at ?? -1, after?.id ?? '', limit])).rows;
    },
    async insertKey(id, orgId, hash, defaults, nowMs, scopes) {
      await pool.query(`
        INSERT INTO api_keys (id, org_id, hash, default_start_within, default_provider, created_at, scopes)
        VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [id, orgId, hash, defaults.startWithin, storedRoutes(defaults.provider), nowMs, scopes]);
    },
    async keyByHash(hash) {
      const result = await pool.query<ApiKeyRecord>({
        name: 'key_by_hash',
        text: `
          SELECT id, org_id AS "orgId", default_start_within AS "defaultStartWithin", default_provider AS "defaultProvider", scopes
          FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`,
        values: [hash],
      });
      return result.rows[0];
    },
    async listKeys(orgId) {
      return (await pool.query<KeyRow>(`
        SELECT id, scopes, default_start_within, default_provider, created_at, revoked_at
        FROM api_keys WHERE org_id = $1 ORDER BY created_at DESC, id`, [orgId])).rows;
    },
    // A revoke notifies only when it revoked a key (an unknown id makes no row, so no NOTIFY), and
    // names the key's hash after the kind ("keys <hash>"): a listener that reads only the kind
    // drops every cached key, one that reads the hash drops that key alone.
    async revokeOrgKey(orgId, keyId, nowMs) {
      const result = await pool.query<{ hash: string }>(`
        WITH changed AS (UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND org_id = $3 AND revoked_at IS NULL RETURNING hash)
        SELECT hash, pg_notify('${CACHE_CHANNEL}', 'keys ' || hash) FROM changed`, [nowMs, keyId, orgId]);
      return result.rows[0]?.hash;
    },
    async listProviderKeys(orgId) {
      return (await pool.query<{ route: RouteName; updated_at: number }>(
        'SELECT route, updated_at FROM provider_keys WHERE org_id = $1 ORDER BY route', [orgId])).rows;
    },
    async revokeKey(keyId, nowMs) {
      const result = await pool.query<{ hash: string }>(`
        WITH changed AS (UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING hash)
        SELECT hash, pg_notify('${CACHE_CHANNEL}', 'keys ' || hash) FROM changed`, [nowMs, keyId]);
      return result.rows[0]?.hash;
    },
    async putProviderKey(orgId, route, sealed, nowMs) {
      await pool.query(`
        WITH changed AS (INSERT INTO provider_keys (org_id, route, sealed, updated_at) VALUES ($1, $2, $3, $4)
          ON CONFLICT (org_id, route) DO UPDATE SET sealed = EXCLUDED.sealed, updated_at = EXCLUDED.updated_at RETURNING 1)
        SELECT pg_notify('${CACHE_CHANNEL}', 'provider_key ' || $1 || ' ' || $2) FROM changed`, [orgId, route, sealed, nowMs]);
    },
    async providerKey(orgId, route) {
      const result = await pool.query<{ sealed: string }>({
        name: 'provider_key', text: 'SELECT sealed FROM provider_keys WHERE org_id = $1 AND route = $2', values: [orgId, route],
      });
      return result.rows[0]?.sealed;
    },
    async providerRoutes(orgId) {
      const result = await pool.query<{ route: RouteName }>('SELECT route FROM provider_keys WHERE org_id = $1', [orgId]);
      return result.rows.map((row) => row.route);
    },
    async deleteProviderKey(orgId, route) {
      const result = await pool.query<{ changed_rows: number }>(`
        WITH changed AS (DELETE FROM provider_keys WHERE org_id = $1 AND route = $2 RETURNING 1)
        SELECT count(*)::INT AS changed_rows, pg_notify('${CACHE_CHANNEL}', 'provider_key ' || $1 || ' ' || $2) FROM changed`,
      [orgId, route]);
      return result.rows[0]!.changed_rows > 0;
    },
    async sealedProviderKeys(after, limit) {
      return (await pool.query<SealedKey>(`
        SELECT org_id, route, sealed FROM provider_keys WHERE (org_id, route) > ($1, $2) ORDER BY org_id, route LIMIT $3`,
      [after?.org_id ?? '', after?.route ?? '', limit])).rows;
    },
    // A reseal's page in one statement, each row compared and set on its own.
    async replaceSealed(changes) {
      return (await pool.query<SealedKeyId>(`
        UPDATE provider_keys p SET sealed = c.to_sealed
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS c(org_id, route, from_sealed, to_sealed)
        WHERE p.org_id = c.org_id AND p.route = c.route AND p.sealed = c.from_sealed
        RETURNING p.org_id, p.route`,
      [changes.map((c) => c.org_id), changes.map((c) => c.route), changes.map((c) => c.from), changes.map((c) => c.to)])).rows;
    },
  };
}
