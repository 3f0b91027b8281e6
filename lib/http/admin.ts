// The admin API (/admin/v1/…), authorized by the admin bearer token. Small JSON bodies, each
// checked by hand against its documented shape; errors in the plain (OpenAI-style) envelope.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { RouteName } from '../ir.ts';
import { GatewayError } from '../errors.ts';
import type { Services } from '../services.ts';
import { parseJsonObject, readBody } from './body.ts';
import { sendJson } from './reply.ts';
import { parseStartWithin } from '../routing/start-within.ts';
import { ROUTES } from '../config.ts';
import { parseVertexCredential } from '../providers/vertex.ts';
import { parseBedrockCredential } from '../providers/bedrock.ts';
import { SCOPES, type Scope } from '../store/orgs.ts';
import { usageReport, usageRequests } from './usage.ts';

const ADMIN_BODY_CAP = 1_000_000;

type Handler = (svc: Services, params: string[], body: () => Promise<Record<string, any>>) => unknown;

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export function adminAuthorized(req: IncomingMessage, token: string | undefined): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return !!token && !!m && timingSafeEqual(digest(m[1]!), digest(token));
}

const ROUTES_TABLE: Array<[string, RegExp, Handler]> = [
  ['GET', /^\/admin\/v1\/orgs$/, async (svc) => {
    // The operator's list: every organization with its managed standing (null without managed routes).
    const now = svc.clock.now();
    const managed = Object.keys(svc.config.managed).length > 0;
    const orgs = await svc.orgs.listOrgs();
    return [200, { object: 'list', data: await Promise.all(orgs.map(async (o) => ({ ...o, managed: managed ? await svc.ledger.snapshot(o.id, now) : null }))) }];
  }],
  ['POST', /^\/admin\/v1\/orgs$/, async (svc, _p, body) => {
    const { name } = await body();
    if (typeof name !== 'string' || !name.trim()) throw bad('name must be a non-empty string');
    const now = svc.clock.now();
    const org = await svc.orgs.createOrg(name.trim(), now);
    await svc.ledger.ensureOrg(org.id, now);
    return [201, org];
  }],
  ['POST', /^\/admin\/v1\/orgs\/([^/]+)\/keys$/, async (svc, [orgId], body) => {
    await requireOrg(svc, orgId!);
    const { default_start_within: dsw = null, scopes = ['inference'] } = await body();
    if (dsw !== null) parseStartWithin(dsw);
    if (!Array.isArray(scopes) || !scopes.every((x) => SCOPES.includes(x))) throw bad(`scopes must be an array of ${SCOPES.join(', ')}`);
    return [201, await svc.orgs.createKey(orgId!, dsw, svc.clock.now(), scopes as Scope[])];
  }],
  ['DELETE', /^\/admin\/v1\/keys\/([^/]+)$/, async (svc, [keyId]) => {
    if (!await svc.orgs.revokeKey(keyId!, svc.clock.now())) throw new GatewayError('key_not_found');
    return [200, { id: keyId, revoked: true }];
  }],
  ['PUT', /^\/admin\/v1\/orgs\/([^/]+)\/provider-keys\/([^/]+)$/, async (svc, [orgId, route], body) => {
    await requireOrg(svc, orgId!);
    const r = requireRoute(route!);
    const b = await body();
    const credential = providerCredential(r, b);
    await svc.orgs.setProviderKey(orgId!, r, credential, svc.clock.now());
    return [200, { org: orgId, route: r, configured: true }];
  }],
  ['DELETE', /^\/admin\/v1\/orgs\/([^/]+)\/provider-keys\/([^/]+)$/, async (svc, [orgId, route]) => {
    await requireOrg(svc, orgId!);
    const r = requireRoute(route!);
    if (!await svc.orgs.deleteProviderKey(orgId!, r)) throw new GatewayError('key_not_found', `No ${r} key is configured.`);
    return [200, { org: orgId, route: r, configured: false }];
  }],
  ['POST', /^\/admin\/v1\/orgs\/([^/]+)\/topups$/, async (svc, [orgId], body) => {
    await requireOrg(svc, orgId!);
    const { cash_micro_usd, credit_micro_usd, ...rest } = await body();
    if (Object.keys(rest).length || ![cash_micro_usd, credit_micro_usd].every(optionalAmount) || (cash_micro_usd === undefined && credit_micro_usd === undefined)) {
      throw bad('body must be {"cash_micro_usd"?: int >= 0, "credit_micro_usd"?: int >= 0}');
    }
    return [200, await svc.ledger.topup(orgId!, { cash_micro_usd, credit_micro_usd }, svc.clock.now())];
  }],
  ['PUT', /^\/admin\/v1\/orgs\/([^/]+)\/overrides$/, async (svc, [orgId], body) => {
    await requireOrg(svc, orgId!);
    const b = await body();
    const { concurrency, daily_spend_micro_usd, ...rest } = b;
    const ok = (v: unknown): boolean => v === undefined || v === null || (Number.isInteger(v) && (v as number) >= 0);
    if (Object.keys(rest).length || !ok(concurrency) || !ok(daily_spend_micro_usd)) throw bad('body must be {"concurrency"?: int|null, "daily_spend_micro_usd"?: int|null}');
    return [200, await svc.ledger.setOverrides(orgId!, { concurrency, daily_spend_micro_usd }, svc.clock.now())];
  }],
  ['POST', /^\/admin\/v1\/orgs\/([^/]+)\/review$/, async (svc, [orgId]) => { await requireOrg(svc, orgId!); return [200, await svc.ledger.startReview(orgId!, svc.clock.now())]; }],
  ['DELETE', /^\/admin\/v1\/orgs\/([^/]+)\/review$/, async (svc, [orgId]) => { await requireOrg(svc, orgId!); return [200, await svc.ledger.endReview(orgId!, svc.clock.now())]; }],
  ['PUT', /^\/admin\/v1\/orgs\/([^/]+)\/exempt$/, async (svc, [orgId], body) => {
    await requireOrg(svc, orgId!);
    const { exempt } = await body();
    if (typeof exempt !== 'boolean') throw bad('body must be {"exempt": boolean}');
    return [200, await svc.ledger.setExempt(orgId!, exempt, svc.clock.now())];
  }],
  ['GET', /^\/admin\/v1\/scheduler$/, (svc) => [200, { as_of: svc.clock.now(), policy: svc.scheduler.cfg, estimates: svc.scheduler.snapshot() }]],
  ['GET', /^\/admin\/v1\/orgs\/([^/]+)\/ledger$/, async (svc, [orgId]) => {
    await requireOrg(svc, orgId!);
    const now = svc.clock.now();
    return [200, { snapshot: await svc.ledger.snapshot(orgId!, now), entries: await svc.ledger.entries(orgId!, 100) }];
  }],
];

export async function handleAdmin(req: IncomingMessage, res: ServerResponse, svc: Services, path: string, adminToken: string | undefined): Promise<void> {
  if (!adminAuthorized(req, adminToken)) throw new GatewayError('admin_unauthorized');
  if (path === '/admin/v1/usage' || path === '/admin/v1/usage/requests') {
    if (req.method !== 'GET') throw new GatewayError('method_not_allowed');
    return path === '/admin/v1/usage' ? usageReport(req, res, svc, undefined) : usageRequests(req, res, svc, undefined);
  }
  let methodMismatch = false;
  for (const [method, re, handler] of ROUTES_TABLE) {
    const m = re.exec(path);
    if (!m) continue;
    if (method !== req.method) { methodMismatch = true; continue; }
    const [status, out] = (await handler(svc, m.slice(1).map(decodeURIComponent), async () => parseJsonObject(await readBody(req, ADMIN_BODY_CAP)))) as [number, unknown];
    sendJson(res, status, JSON.stringify(out));
    return;
  }
  throw new GatewayError(methodMismatch ? 'method_not_allowed' : 'not_found');
}

function bad(msg: string): GatewayError { return new GatewayError('invalid_request', msg); }
const optionalAmount = (v: unknown): boolean => v === undefined || (Number.isSafeInteger(v) && (v as number) >= 0);

async function requireOrg(svc: Services, id: string): Promise<void> {
  if (!await svc.orgs.orgExists(id)) throw new GatewayError('org_not_found');
}

export function requireRoute(r: string): RouteName {
  if (!ROUTES.includes(r as RouteName)) throw bad(`route must be one of ${ROUTES.join(', ')}`);
  return r as RouteName;
}

/** Direct routes take {"key": "<provider key>"}; cloud routes take their documented credential shape. */
export function providerCredential(route: RouteName, b: Record<string, any>): unknown {
  if (route === 'cloud_a') { parseVertexCredential(b); return b; }
  if (route === 'cloud_b') { parseBedrockCredential(b); return b; }
  if (typeof b.key !== 'string' || !b.key) throw bad('body must be {"key": "<provider key>"}');
  return b.key;
}
