// The organization-scoped management API (/v1/organization/…), used by the dashboard. Scope
// model (docs/usage.md "Scopes"): any key of the organization may read who it is; only a key
// with the `manage` scope may list, create or revoke keys and set or delete provider keys. A
// provider key is never shown back, only which routes have one and since when.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { ApiKeyRecord, Scope } from '../store/orgs.ts';
import { SCOPES } from '../store/orgs.ts';
import { parseJsonObject, readBody, requestBodyLimits } from './body.ts';
import { sendJson } from './reply.ts';
import { decodeParam, providerCredential, requireRoute } from './admin.ts';
import { limitOrganizationApi } from './usage.ts';
import { keyDefaults } from '../routing/validate.ts';

const BODY_CAP = 1_000_000;

export async function handleManage(
  req: IncomingMessage, res: ServerResponse, svc: Services, path: string, key: ApiKeyRecord,
): Promise<void> {
  try {
    await manage(req, res, svc, path, key);
  } catch (err) {
    // The caller gets 503 store_unavailable; the operator's log gets why.
    if (err instanceof GatewayError && err.code === 'store_unavailable') {
      svc.log.warn({ org: key.orgId, err: { message: ((err as { cause?: Error }).cause)?.message } }, 'organization store unavailable');
    }
    throw err;
  }
}

async function manage(
  req: IncomingMessage, res: ServerResponse, svc: Services, path: string, key: ApiKeyRecord,
): Promise<void> {
  const orgId = key.orgId;
  limitOrganizationApi(svc, orgId);
  const scopes = key.scopes.split(' ');
  // The body timeouts apply here as to every other body: a stalled one is a 408, not a connection held.
  const body = async (): Promise<Record<string, any>> => parseJsonObject(await readBody(req, requestBodyLimits(svc, BODY_CAP)));
  const reply = (status: number, out: unknown): void => sendJson(res, status, JSON.stringify(out), { 'cache-control': 'no-store' });

  if (path === '/v1/organization') {
    if (req.method !== 'GET') throw new GatewayError('method_not_allowed');
    const org = (await svc.orgs.org(orgId))!;
    return reply(200, { object: 'organization', id: org.id, name: org.name, key: { id: key.id, scopes } });
  }
  if (!scopes.includes('manage')) throw new GatewayError('insufficient_scope');
  const now = svc.clock.now();

  if (path === '/v1/organization/keys') {
    if (req.method === 'GET') return reply(200, { object: 'list', data: await svc.orgs.listKeys(orgId) });
    if (req.method !== 'POST') throw new GatewayError('method_not_allowed');
    const { scopes: wanted = ['inference'], default_start_within: startWithin = null, default_provider: provider = null, ...rest } = await body();
    const unknownField = Object.keys(rest)[0];
    if (unknownField !== undefined) throw new GatewayError('invalid_request', `Unknown field ${unknownField}.`, { param: unknownField });
    if (!Array.isArray(wanted) || !wanted.every((scope) => SCOPES.includes(scope))) {
      throw new GatewayError('invalid_request', `scopes must be an array of ${SCOPES.join(', ')}.`, { param: 'scopes' });
    }
    const defaults = keyDefaults(startWithin, provider);
    const created = await svc.orgs.createKey(orgId, defaults, now, wanted as Scope[]);
    svc.log.info({ org: orgId, key_id: created.id, by_key: key.id, scopes: created.scopes }, 'api key created');
    return reply(201, {
      object: 'api_key', ...created, default_start_within: defaults.startWithin, default_provider: defaults.provider, created_at: now,
    });
  }
  let match = /^\/v1\/organization\/keys\/([^/]+)$/.exec(path);
  if (match) {
    if (req.method !== 'DELETE') throw new GatewayError('method_not_allowed');
    const id = decodeParam(match[1]!);
    if (!await svc.orgs.revokeOrgKey(orgId, id, now)) throw new GatewayError('key_not_found');
    svc.log.info({ org: orgId, key_id: id, by_key: key.id }, 'api key revoked');
    return reply(200, { id, revoked: true });
  }
  if (path === '/v1/organization/provider-keys') {
    if (req.method !== 'GET') throw new GatewayError('method_not_allowed');
    const providerKeys = await svc.orgs.listProviderKeys(orgId);
    return reply(200, { object: 'list', data: providerKeys.map((providerKey) => ({ ...providerKey, configured: true })) });
  }
  match = /^\/v1\/organization\/provider-keys\/([^/]+)$/.exec(path);
  if (match) {
    const route = requireRoute(decodeParam(match[1]!));
    if (req.method === 'PUT') {
      await svc.orgs.setProviderKey(orgId, route, providerCredential(route, await body()), now);
      svc.log.info({ org: orgId, route, by_key: key.id }, 'provider key set');
      return reply(200, { route, configured: true, updated_at: now });
    }
    if (req.method === 'DELETE') {
      if (!await svc.orgs.deleteProviderKey(orgId, route)) throw new GatewayError('key_not_found', `No ${route} key is configured.`);
      svc.log.info({ org: orgId, route, by_key: key.id }, 'provider key deleted');
      return reply(200, { route, configured: false });
    }
    throw new GatewayError('method_not_allowed');
  }
  throw new GatewayError('not_found');
}
