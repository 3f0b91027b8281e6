// The admin API (/admin/v1/…), authorized by the admin bearer token. Every input is checked before
// it is used: path parameters are percent-decoded safely and must look like the ids the store
// issues (else the thing cannot exist: 404), bodies are validated by JSON Schemas compiled at
// start (schemas/admin.json; integers bounded to what the ledger stores exactly), and errors from
// parsing a credential are replaced by fixed messages, so no key material reaches an answer or a
// log. Wrong admin tokens are counted per client address and limited like failed API keys.
// Errors use the plain (OpenAI-style) envelope.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { timingSafeEqual, createHash } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import type { RouteName } from '../routes.ts';
import { GatewayError } from '../errors.ts';
import type { Services } from '../services.ts';
import { parseJsonObject, readBody, requestBodyLimits } from './body.ts';
import { sendJson } from './reply.ts';
import type { Headers } from '../headers.ts';
import { ROUTES } from '../config.ts';
import { parseVertexCredential } from '../providers/vertex.ts';
import { parseBedrockCredential } from '../providers/bedrock.ts';
import { SCOPES, type OrgInfo, type Scope } from '../store/orgs.ts';
import { MAX_PAGE } from '../usage/query.ts';
import { usageReport, usageRequests } from './usage.ts';
import { BalanceOverflowError, IdempotencyConflictError } from '../ledger/rules.ts';
import { sealPeers } from '../ledger/liveness.ts';
import type { LiveProcess } from '../ledger/types.ts';
import adminSchemas from '../../schemas/admin.json' with { type: 'json' };
import { keyDefaults } from '../routing/validate.ts';

const ADMIN_BODY_CAP = 1_000_000;
/** Ids the store issues: a prefix and base64url characters. Anything else names nothing. */
const ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Organizations a page of GET /admin/v1/orgs answers when the caller names no `limit`. */
const DEFAULT_ORGS_PAGE = 100;
/** Marks the answer to a top-up its Idempotency-Key had already credited (Stripe's header name). */
const REPLAYED = { 'idempotent-replayed': 'true' };

type Body = Record<string, any>;
type Handler = (svc: Services, params: string[], body: () => Promise<Body>, search: URLSearchParams, req: IncomingMessage) => unknown;

/** Stripe's rule for the header: up to 255 characters; here visible ASCII only, so it prints and
 *  compares as sent. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

// The schemas are meta-checked by test/schemas.test.ts, not at every start.
const ajv = new Ajv({ allErrors: false, strict: false, validateSchema: false });
ajv.addSchema(adminSchemas);
const schema = (name: string): ValidateFunction => ajv.getSchema(`admin.json#/$defs/${name}`)!;
const BODIES = {
  createOrg: schema('create_org'),
  createKey: schema('create_key'),
  directKey: schema('direct_key'),
  cloudAKey: schema('cloud_a_key'),
  cloudBKey: schema('cloud_b_key'),
  topup: schema('topup'),
  overrides: schema('overrides'),
  exempt: schema('exempt'),
};

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

export function adminAuthorized(req: IncomingMessage, token: string | undefined): boolean {
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return !!token && !!bearer && timingSafeEqual(digest(bearer[1]!), digest(token));
}

/** The admin API's endpoints: method, path pattern (its groups are the path parameters), handler. */
const ADMIN_ENDPOINTS: Array<[string, RegExp, Handler]> = [
  ['GET', /^\/admin\/v1\/orgs$/, async (svc, _p, _b, search) => {
    // The operator's list, a page at a time (oldest first): each organization with its managed
    // standing (null without managed routes). A snapshot is a ledger read per organization, so
    // ten thousand of them in one answer held the process for over a second (docs/usage.md).
    const { limit, after } = orgsPage(search);
    const now = svc.clock.now();
    const managed = Object.keys(svc.config.managed).length > 0;
    // The page after the cursor's organization, in the store's own order (by creation time, then id
    // as the store collates it), read a page at a time: reading every organization for each page
    // made a long list's last pages cost as much as the whole list.
    const found = await svc.orgs.orgsPage(after, limit);
    if (!found) throw new GatewayError('invalid_cursor', undefined, { param: 'cursor' });
    const { page } = found;
    const data = await Promise.all(page.map(async (org) => ({
      ...org,
      managed: managed ? await svc.ledger.snapshot(org.id, now) : null,
    })));
    const last = page[page.length - 1];
    const more = found.more && last !== undefined;
    return [200, { object: 'list', data, has_more: more, next_cursor: more ? encodeOrgCursor(last) : null }];
  }],
  ['POST', /^\/admin\/v1\/orgs$/, async (svc, _p, body) => {
    const { name } = checked(BODIES.createOrg, await body());
    const now = svc.clock.now();
    // The ledger's row first: an organization is listed (with its ledger) only once it is stored,
    // so a ledger write that fails (503, retried) leaves no organization without its ledger.
    const id = svc.orgs.newOrgId();
    await ledgerWrite(svc, id, () => svc.ledger.ensureOrg(id, now));
    return [201, await svc.orgs.createOrg(String(name).trim(), now, id)];
  }],
  ['POST', /^\/admin\/v1\/orgs\/([^/]+)\/keys$/, async (svc, [orgId], body) => {
    await requireOrg(svc, orgId!);
    const { default_start_within: startWithin = null, default_provider: provider = null, scopes = ['inference'] } = checked(BODIES.createKey, await body());
    if (!Array.isArray(scopes) || !scopes.every((scope) => SCOPES.includes(scope))) {
      throw bad(`scopes must be an array of ${SCOPES.join(', ')}`);
    }
    return [201, await svc.orgs.createKey(orgId!, keyDefaults(startWithin, provider), svc.clock.now(), scopes as Scope[])];
  }],
  ['DELETE', /^\/admin\/v1\/keys\/([^/]+)$/, async (svc, [keyId]) => {
    if (!ID.test(keyId!) || !await svc.orgs.revokeKey(keyId!, svc.clock.now())) throw new GatewayError('key_not_found');
    return [200, { id: keyId, revoked: true }];
  }],
  ['PUT', /^\/admin\/v1\/orgs\/([^/]+)\/provider-keys\/([^/]+)$/, async (svc, [orgId, routeParam], body) => {
    await requireOrg(svc, orgId!);
    const route = requireRoute(routeParam!);
    const credential = providerCredential(route, await body());
    await svc.orgs.setProviderKey(orgId!, route, credential, svc.clock.now());
    return [200, { org: orgId, route, configured: true }];
  }],
  ['DELETE', /^\/admin\/v1\/orgs\/([^/]+)\/provider-keys\/([^/]+)$/, async (svc, [orgId, routeParam]) => {
    await requireOrg(svc, orgId!);
    const route = requireRoute(routeParam!);
    if (!await svc.orgs.deleteProviderKey(orgId!, route)) throw new GatewayError('key_not_found', `No ${route} key is configured.`);
    return [200, { org: orgId, route, configured: false }];
  }],
  ['POST', /^\/admin\/v1\/orgs\/([^/]+)\/topups$/, async (svc, [orgId], body, _s, req) => {
    await requireOrg(svc, orgId!);
    // A billing job that timed out waiting for the answer sends the top-up again with the same
    // Idempotency-Key: the ledger credits it once (README "Top-ups").
    const key = req.headers['idempotency-key'];
    if (key !== undefined && (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key))) {
      throw bad('Idempotency-Key must be 1 to 255 visible ASCII characters');
    }
    const { cash_micro_usd, credit_micro_usd } = checked(BODIES.topup, await body(),
      'body must be {"cash_micro_usd"?: int >= 0, "credit_micro_usd"?: int >= 0}, at most 10^15 each');
    const { replayed, ...snapshot } = await ledgerWrite(svc, orgId!, () => svc.ledger.topup(orgId!, { cash_micro_usd, credit_micro_usd }, svc.clock.now(), key));
    return [200, snapshot, replayed ? REPLAYED : undefined];
  }],
  ['PUT', /^\/admin\/v1\/orgs\/([^/]+)\/overrides$/, async (svc, [orgId], body) => {
    await requireOrg(svc, orgId!);
    const { concurrency, daily_spend_micro_usd } = checked(BODIES.overrides, await body(),
      'body must be {"concurrency"?: int 0..1000000 | null, "daily_spend_micro_usd"?: int 0..10^15 | null}');
    return [200, await ledgerWrite(svc, orgId!, () => svc.ledger.setOverrides(orgId!, { concurrency, daily_spend_micro_usd }, svc.clock.now()))];
  }],
  ['POST', /^\/admin\/v1\/orgs\/([^/]+)\/review$/, async (svc, [orgId]) => {
    await requireOrg(svc, orgId!);
    return [200, await ledgerWrite(svc, orgId!, () => svc.ledger.startReview(orgId!, svc.clock.now()))];
  }],
  ['DELETE', /^\/admin\/v1\/orgs\/([^/]+)\/review$/, async (svc, [orgId]) => {
    await requireOrg(svc, orgId!);
    return [200, await ledgerWrite(svc, orgId!, () => svc.ledger.endReview(orgId!, svc.clock.now()))];
  }],
  ['PUT', /^\/admin\/v1\/orgs\/([^/]+)\/exempt$/, async (svc, [orgId], body) => {
    await requireOrg(svc, orgId!);
    const { exempt } = checked(BODIES.exempt, await body(), 'body must be {"exempt": boolean}');
    return [200, await ledgerWrite(svc, orgId!, () => svc.ledger.setExempt(orgId!, exempt, svc.clock.now()))];
  }],
  ['GET', /^\/admin\/v1\/orgs\/([^/]+)\/ledger$/, async (svc, [orgId]) => {
    await requireOrg(svc, orgId!);
    const now = svc.clock.now();
    return [200, { snapshot: await svc.ledger.snapshot(orgId!, now), entries: await svc.ledger.entries(orgId!, 100) }];
  }],
  // After a rotation of GATEWAY_SECRET_KEY (README "Rotating GATEWAY_SECRET_KEY"): every provider
  // key sealed by a previous secret is sealed with the current one, so the previous can go.
  ['POST', /^\/admin\/v1\/provider-keys\/reseal$/, async (svc) => {
    await refuseSealDisagreement(svc);
    return [200, await svc.orgs.resealProviderKeys()];
  }],
  // The running processes and the fingerprint of the secret each seals with: who disagrees.
  ['GET', /^\/admin\/v1\/processes$/, async (svc) => {
    const now = svc.clock.now();
    const mine = svc.orgs.sealFingerprints.current;
    const data = (await liveProcesses(svc, now)).map((p) => ({
      process_id: p.processId, instance_id: p.instanceId, host: p.host, pid: p.pid, heartbeat_at_ms: p.heartbeatAtMs,
      seal_fingerprint: p.sealFingerprint, same_secret: p.sealFingerprint === null ? null : p.sealFingerprint === mine, self: p.self,
    }));
    return [200, { object: 'list', as_of: now, seal_fingerprint: mine, data }];
  }],
  ['GET', /^\/admin\/v1\/scheduler$/, (svc) => [200, {
    as_of: svc.clock.now(), policy: svc.scheduler.cfg, estimates: svc.scheduler.snapshot(), launches: svc.scheduler.launches(),
  }]],
];

export async function handleAdmin(
  req: IncomingMessage, res: ServerResponse, svc: Services, path: string, adminToken: string | undefined,
): Promise<void> {
  const ip = svc.clientIp(req);
  const lock = svc.abuse.checkAdmin(ip);
  if (!lock.ok) throw new GatewayError('rate_limit_exceeded', undefined, { retryAfterS: lock.retryAfterS });
  if (!adminAuthorized(req, adminToken)) {
    svc.abuse.recordFailedAdmin(ip);
    throw new GatewayError('admin_unauthorized');
  }
  if (path === '/admin/v1/usage' || path === '/admin/v1/usage/requests') {
    if (req.method !== 'GET') throw new GatewayError('method_not_allowed');
    return path === '/admin/v1/usage' ? usageReport(req, res, svc, undefined) : usageRequests(req, res, svc, undefined);
  }
  let methodMismatch = false;
  for (const [method, pattern, handler] of ADMIN_ENDPOINTS) {
    const match = pattern.exec(path);
    if (!match) continue;
    if (method !== req.method) { methodMismatch = true; continue; }
    const params = match.slice(1).map(decodeParam);
    const readJson = async (): Promise<Body> => parseJsonObject(await readBody(req, requestBodyLimits(svc, ADMIN_BODY_CAP)));
    const search = new URL(req.url ?? '/', 'http://x').searchParams;
    const [status, out, headers] = (await handler(svc, params, readJson, search, req)) as [number, unknown, Headers?];
    sendJson(res, status, JSON.stringify(out), headers);
    return;
  }
  throw new GatewayError(methodMismatch ? 'method_not_allowed' : 'not_found');
}

/** Percent-decoding that never throws (`%ZZ`, a lone surrogate): a malformed one is the caller's 400. */
export function decodeParam(raw: string): string {
  try { return decodeURIComponent(raw); } catch { throw bad('a path segment is not valid percent-encoding'); }
}

/** `limit` 1–200 (default 100) and the `cursor` of the previous page (its last organization's id). */
function orgsPage(search: URLSearchParams): { limit: number; after: string | null } {
  const limitParam = search.get('limit');
  const limit = limitParam === null ? DEFAULT_ORGS_PAGE : Number(limitParam);
  if (limitParam !== null && (!/^\d{1,3}$/.test(limitParam) || limit < 1 || limit > MAX_PAGE)) {
    throw new GatewayError('invalid_limit', undefined, { param: 'limit' });
  }
  const cursor = search.get('cursor');
  if (cursor === null) return { limit, after: null };
  const id = Buffer.from(cursor, 'base64url').toString('latin1');
  if (!ID.test(id)) throw new GatewayError('invalid_cursor', undefined, { param: 'cursor' });
  return { limit, after: id };
}

const encodeOrgCursor = (org: OrgInfo): string => Buffer.from(org.id).toString('base64url');

function bad(message: string): GatewayError { return new GatewayError('invalid_request', message); }

/** Validates a body; the message names the field and rule, never a value (it may be a secret). */
function checked(validate: ValidateFunction, body: Body, usage?: string): Body {
  if (validate(body)) return body;
  const error = validate.errors?.[0];
  const where = error ? `${error.instancePath || 'body'} ${error.message ?? 'is invalid'}` : 'body is invalid';
  throw bad(usage ? `${usage} (${where})` : where);
}

/** A ledger write of the operator's (top-up, overrides, review, exempt). Its own refusals keep
 *  their answers; a store that fails (SQLite's disk full, read-only or locked file, PostgreSQL
 *  unreachable) answers 503 store_unavailable, as creating an organization does: a billing job
 *  retries a 503, where a 500 reads as final. The operator's log gets why. */
async function ledgerWrite<T>(svc: Services, orgId: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    // The balance must stay an integer the ledger (and JavaScript) holds exactly: the ledger checks
    // it inside the top-up's transaction.
    if (err instanceof BalanceOverflowError) throw bad(err.message);
    if (err instanceof IdempotencyConflictError) throw new GatewayError('idempotency_key_reused');
    if (err instanceof GatewayError) throw err;
    svc.log.warn({ org: orgId, err: { message: (err as Error | null)?.message } }, 'ledger write failed: answered store_unavailable');
    throw Object.assign(new GatewayError('store_unavailable', 'The ledger cannot be written right now; retry shortly.'), { cause: err });
  }
}

/** A reseal seals every provider key with this process's secret: while another running process
 *  seals with a different one (a mistyped GATEWAY_SECRET_KEY here or there, or a rotation whose
 *  restarts are not finished) or does not say which (an earlier build), that one could open none of
 *  them afterwards. Refused, nothing written; the answer counts them and GET /admin/v1/processes
 *  names them. A check, then the reseal: a process starting in between is not seen. */
async function refuseSealDisagreement(svc: Services): Promise<void> {
  const mine = svc.orgs.sealFingerprints;
  const peers = sealPeers(await liveProcesses(svc, svc.clock.now()), mine);
  if (peers.different === 0 && peers.unknown === 0) return;
  const parts = [];
  if (peers.different > 0) {
    parts.push(`${peers.different} of the ${peers.others} other running processes seal provider keys with a different GATEWAY_SECRET_KEY`
      + (peers.onPrevious > 0 ? ` (${peers.onPrevious} with this process's GATEWAY_SECRET_KEY_PREVIOUS: not restarted yet)` : ''));
  }
  if (peers.unknown > 0) parts.push(`${peers.unknown} run an earlier build that does not say which secret it seals with`);
  throw new GatewayError('secret_mismatch', `Nothing was resealed: ${parts.join('; ')}. This process seals with fingerprint `
    + `${mine.current}; GET /admin/v1/processes lists every running process's. Give every process the same GATEWAY_SECRET_KEY, `
    + 'then reseal (a process stopped without shutting down counts until its heartbeat is older than ledger.hold_lease_ms).');
}

/** The running processes (ledger/liveness.ts); a store that fails answers 503 store_unavailable
 *  (the operator's log gets why), as a ledger write does. */
async function liveProcesses(svc: Services, nowMs: number): Promise<LiveProcess[]> {
  try {
    return await svc.ledger.liveProcesses(nowMs);
  } catch (err) {
    svc.log.warn({ err: { message: (err as Error | null)?.message } }, 'process registry read failed: answered store_unavailable');
    throw Object.assign(new GatewayError('store_unavailable'), { cause: err });
  }
}

async function requireOrg(svc: Services, id: string): Promise<void> {
  if (!ID.test(id) || !await svc.orgs.orgExists(id)) throw new GatewayError('org_not_found');
}

export function requireRoute(name: string): RouteName {
  if (!ROUTES.includes(name as RouteName)) throw bad(`route must be one of ${ROUTES.join(', ')}`);
  return name as RouteName;
}

/** Direct routes take {"key": "<provider key>"}; cloud routes take their documented credential
 *  shape. Parse errors get fixed messages: a JSON.parse message would quote the key's first bytes. */
export function providerCredential(route: RouteName, body: Body): unknown {
  if (route === 'cloud_a') {
    checked(BODIES.cloudAKey, body, 'body must be {"key": <service-account JSON object or text>, "project"?, "location"?}');
    try {
      parseVertexCredential(body);
    } catch {
      throw bad('the cloud_a key must be a service-account JSON with client_email, private_key and a project');
    }
    return body;
  }
  if (route === 'cloud_b') {
    checked(BODIES.cloudBKey, body, 'body must be {"key": {"access_key_id", "secret_access_key", "session_token"?}, "region"?}');
    parseBedrockCredential(body);
    return body;
  }
  checked(BODIES.directKey, body, 'body must be {"key": "<provider key>"}');
  return body.key;
}
