// The node:http server: a route table from method and path to a handler. No framework.
import { createServer, ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, type Server } from 'node:http';
import { GatewayError } from '../errors.ts';
import type { Services } from '../services.ts';
import { handleInference, refuseEarly } from './pipeline.ts';
import { guard } from './auth.ts';
import { handleAdmin } from './admin.ts';
import { handleCountTokens } from './count-tokens.ts';
import { asGatewayError, causeOf, errorBody, sendError, sendJson, setRequestId } from './reply.ts';
import { CALLER_CODECS, type CallerFormat } from '../formats/index.ts';
import { buildLimitsReport, serializeLimitsReport } from '../limits/report.ts';
import { catalogAnswer, catalogBodies, catalogEnvelope, isCatalogPath, type CatalogBodies } from './models.ts';
import { usageReport, usageRequests } from './usage.ts';
import { handleManage } from './manage.ts';
import { serveDashboard } from './dashboard.ts';
import type { ApiKeyRecord } from '../store/orgs.ts';
import { awaitContinue, BODY_CAP } from './body.ts';
import type { Headers } from '../headers.ts';
import { answerPreflight, corsHeadersFor, corsPolicy, isCorsPath, isPreflight, withCorsHeaders, type CorsPolicy } from './cors.ts';

/** Inference path → caller format: each caller format's codec names its endpoint's path. */
const INFERENCE: Record<string, CallerFormat> = Object.fromEntries(
  (Object.keys(CALLER_CODECS) as CallerFormat[]).map((format) => [CALLER_CODECS[format].endpoint.path, format]));

export function createHttpServer(svc: Services, adminToken: string | undefined): Server {
  const models = catalogBodies(svc.catalog);
  const cors = corsPolicy(svc.config.cors);
  // Request headers must arrive within timeouts.request_headers_ms (node checks open connections
  // every connectionsCheckingInterval); the body's limits are read by readBody (lib/http/body.ts).
  // requestTimeout stays 0: node's would also cut long-lived streamed answers' requests.
  const headersMs = svc.config.timeouts.request_headers_ms;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    dispatch(req, res, svc, adminToken, models, cors).catch((err) => {
      // A refusal of the caller's (a wrong key on /v1/limits, a rate limit) is an answer, not the
      // gateway's failure: one info line with its code, not an error with a stack per bad request.
      if (err instanceof GatewayError && err.status < 500) svc.log.info({ path: req.url?.split('?')[0], status: err.status, code: err.code }, 'refused');
      else svc.log.error({ err }, 'unhandled');
      if (!res.headersSent) sendError(res, 'plain', asGatewayError(err)); else res.destroy();
    });
  };
  const server = createServer({
    keepAliveTimeout: 65_000, requestTimeout: 0, headersTimeout: headersMs,
    connectionsCheckingInterval: headersMs ? Math.max(100, Math.min(1_000, Math.floor(headersMs / 4))) : 30_000,
    ServerResponse: gatewayResponse(svc),
  }, handle);
  // Expect: 100-continue (curl sends it for bodies over 1 KB): node would send the 100 before any
  // check, so a wrong key uploaded its whole body to get its 401. A declared body over the cap is
  // refused at once; any other request runs as usual, and readBody sends the 100 when it starts
  // reading. Refused before (a key, a rate), it never asks for the body: node then closes the
  // connection after the answer (the body the client may still send is not waited for).
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (Number(req.headers['content-length']) > BODY_CAP) {
      refuseAt(pathOf(req), res, svc, new GatewayError('request_too_large'));
      return;
    }
    awaitContinue(req, res);
    handle(req, res);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') svc.metrics.timeouts.inc({ edge: 'request_headers' });
    if (err.code === 'ECONNRESET' || !socket.writable) { socket.destroy(); return; }
    // As node answers by default (no error text is echoed), with our body for the timeout.
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      const body = JSON.stringify(errorBody('plain', new GatewayError('request_timeout', 'The request headers did not arrive in time.')));
      const head = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json';
      socket.end(`${head}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    } else if (err.code === 'HPE_HEADER_OVERFLOW') socket.end('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n');
    else socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  });
  return server;
}

/** Every answer of the server: one that would leave its connection with a request body still
 *  to come, or is written while the gateway drains, closes the connection (Connection: close). Node
 *  otherwise discards an unread body on a kept connection, with neither size limit nor timeout: a
 *  wrong key declaring a gigabyte and sending a byte a second held its socket for as long as it
 *  liked; and a drained gateway's clients would send their next request to it (lib/app.ts close).
 *  A few property reads per answer: a request whose body was read, or that had none, keeps its
 *  connection (SDK pools and the benchmarks reuse it). */
function gatewayResponse(svc: Services): typeof ServerResponse<IncomingMessage> {
  return class extends ServerResponse<IncomingMessage> implements GatewayResponse {
    declare cors?: readonly string[];
    override writeHead(
      statusCode: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
    ): this {
      if (svc.shuttingDown || bodyLeft(this.req)) this.shouldKeepAlive = false;
      // node's writeHead reads (statusCode, headers) and (statusCode, reason, headers) alike.
      if (this.cors === undefined) return super.writeHead(statusCode, reason as string, headers);
      if (typeof reason === 'string') return super.writeHead(statusCode, reason, withCorsHeaders(headers, this.cors));
      return super.writeHead(statusCode, withCorsHeaders(reason ?? headers, this.cors));
    }
  };
}

/** An answer of the server: `cors`, the CORS headers dispatch decided for it (lib/http/cors.ts),
 *  written with its head whatever writes it. */
interface GatewayResponse extends ServerResponse<IncomingMessage> { cors?: readonly string[] }

/** Is part of the request's body still to come, unread? A request that declares none (a GET) or
 *  whose body was read (readBody read it whole, or refused it and closes) is done with. node marks
 *  a request complete only at a later read of the socket (a served POST is often answered before
 *  that), so a buffer holding every declared byte counts as done too: discarding it costs nothing.
 *  A refusal written as the headers arrive, before node has parsed the body (a POST to an unknown
 *  path), closes: rare, and the client only reconnects. */
function bodyLeft(req: IncomingMessage): boolean {
  if (req.complete || req.readableDidRead) return false;
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const declared = Number(req.headers['content-length']);
  return declared > 0 && req.readableLength < declared;
}

/** The path of the request target: origin-form (`/v1/responses?x`) or absolute-form
 *  (`http://host/v1/responses`, which a server must accept, RFC 9112 §3.2.2; it is rewritten to
 *  origin-form so every handler reads req.url alike). */
function pathOf(req: IncomingMessage): string {
  let url = req.url ?? '/';
  if (url.charCodeAt(0) !== 47 /* '/' */) {
    try {
      const u = new URL(url);
      req.url = url = u.pathname + u.search;
    } catch { /* '*' or not a URL: no route has it */ }
  }
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

const COUNT_TOKENS = '/v1/messages/count_tokens';

/** A refusal written before a path's handler runs (a 405, a declared body over the cap). An
 *  inference endpoint's, count_tokens' among them, is answered in its caller format with its id,
 *  counted and logged as any refused request (lib/http/pipeline.ts refuseEarly); any other path's
 *  in the plain envelope. */
function refuseAt(path: string, res: ServerResponse, svc: Services, err: GatewayError, headers?: Headers): void {
  const format = INFERENCE[path];
  if (format) refuseEarly(svc, res, format, format, err, headers);
  else if (path === COUNT_TOKENS) refuseEarly(svc, res, 'messages', 'count_tokens', err, headers);
  else sendError(res, 'plain', err, headers);
}

async function dispatch(
  req: IncomingMessage, res: ServerResponse, svc: Services, adminToken: string | undefined, models: CatalogBodies,
  cors: CorsPolicy | undefined,
): Promise<void> {
  const path = pathOf(req);
  const format = INFERENCE[path];
  // Off (the default), one check; on, a request naming its origin on /v1/... gets its preflight
  // answered here (no key, no count), or its answer's CORS headers, added as the head is written.
  if (cors !== undefined && req.headers.origin !== undefined && isCorsPath(path)) {
    if (isPreflight(req)) return answerPreflight(req, res, cors, req.headers.origin, methodsOf(path, format));
    (res as GatewayResponse).cors = corsHeadersFor(cors, req.headers.origin);
  }
  if (format) {
    if (req.method !== 'POST') return refuseAt(path, res, svc, new GatewayError('method_not_allowed'), POST_ONLY);
    return handleInference(format, req, res, svc);
  }
  if (path === COUNT_TOKENS) {
    if (req.method !== 'POST') return refuseAt(path, res, svc, new GatewayError('method_not_allowed'), POST_ONLY);
    return handleCountTokens(req, res, svc);
  }
  // HEAD is answered as GET on every route: node made a HEAD's answer bodiless when the request
  // arrived (its headers, Content-Length included, are GET's), so the handlers that compare the
  // method with GET (admin, management) serve it too.
  if (req.method === 'HEAD') req.method = 'GET';
  // Every API answer carries a request id, as the providers' do (a support ticket, a page's error
  // report, the error line below); inference and count_tokens make their own. Probes, /metrics
  // and the dashboard's files have none.
  const id = path.startsWith('/v1/') || path.startsWith('/admin/v1/') ? setRequestId(res) : undefined;
  try {
    if (path.startsWith('/admin/v1/')) return await handleAdmin(req, res, svc, path, adminToken);
    if (path === '/v1/organization' || path.startsWith('/v1/organization/')) {
      return await handleManage(req, res, svc, path, await orgKey(req, svc));
    }
    if (path === '/dashboard' || path.startsWith('/dashboard/')) return serveDashboard(req, res, path);
    if (req.method !== 'GET') throw new GatewayError(GET_ROUTES.has(path) || isCatalogPath(path) ? 'method_not_allowed' : 'not_found');
    if (isCatalogPath(path)) {
      await guard(req, svc, { keyRate: false });
      return sendJson(res, 200, catalogAnswer(models, path));
    }
    switch (path) {
      case '/healthz': return sendJson(res, 200, '{"status":"ok"}');
      case '/readyz': return readyz(res, svc);
      case '/metrics': {
        const body = await svc.metrics.registry.metrics();
        res.writeHead(200, { 'content-type': svc.metrics.registry.contentType });
        res.end(body);
        return;
      }
      case '/v1/limits':
        return limits(req, res, svc);
      case '/v1/usage':
        return await usageReport(req, res, svc, (await orgKey(req, svc)).orgId);
      case '/v1/usage/requests':
        return await usageRequests(req, res, svc, (await orgKey(req, svc)).orgId);
      default:
        throw new GatewayError('not_found');
    }
  } catch (err) {
    const ge = asGatewayError(err);
    if (ge.code === 'internal_error') svc.log.error({ err, req: id }, 'internal error');
    if (ge.code === 'internal_error' || ge.code === 'store_unavailable') svc.store.observe?.(causeOf(err));
    const envelope = isCatalogPath(path) ? catalogEnvelope(req) : 'plain';
    sendError(res, envelope, ge, ge.code === 'method_not_allowed' ? { allow: allowedOn(path) } : undefined);
  }
}

/** A 405 names the methods the path takes (RFC 9110 §15.5.6: Allow is a MUST). */
const POST_ONLY: Headers = { allow: 'POST' };
const READ = 'GET, HEAD';
/** The GET routes of this file. */
const GET_ROUTES = new Set(['/healthz', '/readyz', '/metrics', '/v1/models', '/v1/limits', '/v1/usage', '/v1/usage/requests']);
/** The methods of the routes other files serve (lib/http/admin.ts ADMIN_ENDPOINTS, lib/http/manage.ts,
 *  lib/http/dashboard.ts), read only to write a 405: test/e2e/http-edges.test.ts checks them
 *  against what those handlers answer. */
const ALLOWED: Array<[RegExp, string]> = [
  [/^\/admin\/v1\/orgs$/, 'GET, HEAD, POST'],
  [/^\/admin\/v1\/orgs\/[^/]+\/keys$/, 'POST'],
  [/^\/admin\/v1\/keys\/[^/]+$/, 'DELETE'],
  [/^\/admin\/v1\/orgs\/[^/]+\/provider-keys\/[^/]+$/, 'PUT, DELETE'],
  [/^\/admin\/v1\/orgs\/[^/]+\/topups$/, 'POST'],
  [/^\/admin\/v1\/provider-keys\/reseal$/, 'POST'],
  [/^\/admin\/v1\/orgs\/[^/]+\/review$/, 'POST, DELETE'],
  [/^\/admin\/v1\/orgs\/[^/]+\/(overrides|exempt)$/, 'PUT'],
  [/^\/admin\/v1\/(orgs\/[^/]+\/ledger|scheduler|usage|usage\/requests)$/, READ],
  [/^\/v1\/organization(\/provider-keys)?$/, READ],
  [/^\/v1\/organization\/keys$/, 'GET, HEAD, POST'],
  [/^\/v1\/organization\/keys\/[^/]+$/, 'DELETE'],
  [/^\/v1\/organization\/provider-keys\/[^/]+$/, 'PUT, DELETE'],
];

/** The methods a path takes, as a preflight allows them. */
const methodsOf = (path: string, format: CallerFormat | undefined): string =>
  format !== undefined || path === COUNT_TOKENS ? 'POST' : allowedOn(path);

function allowedOn(path: string): string {
  if (GET_ROUTES.has(path) || path === '/dashboard' || path.startsWith('/dashboard/')) return READ;
  return ALLOWED.find(([pattern]) => pattern.test(path))?.[1] ?? READ;
}

/** The organization endpoints beside inference (limits, usage, management): the guard as on
 *  inference, with a missing key answered as invalid_api_key (spec, GET /v1/limits). */
function orgKey(req: IncomingMessage, svc: Services): Promise<ApiKeyRecord> {
  return guard(req, svc, { missing: 'invalid_api_key' });
}

/** GET /v1/limits: read the record that admits requests, never a cached figure (spec). The abuse
 *  limits apply as on inference: the client IP's rate and failed-authentication lockout before the
 *  key is read (else this endpoint's 401/200 would be an unlimited key-guessing oracle), then the
 *  organization and key rates. The managed block lists the routes served on the service for this
 *  organization: the configured managed routes it has no own key for (the planner runs a route on
 *  the org's own key when there is one), and is null when none is left. */
async function limits(req: IncomingMessage, res: ServerResponse, svc: Services): Promise<void> {
  const key = await orgKey(req, svc);
  const now = svc.clock.now();
  const managedRoutes = Object.keys(svc.config.managed);
  let providers: string[] = [];
  let snapshot = null;
  if (managedRoutes.length) {
    try {
      const own = new Set<string>((await svc.orgs.listProviderKeys(key.orgId)).map((k) => k.route));
      providers = managedRoutes.filter((route) => !own.has(route));
      if (providers.length) snapshot = await svc.ledger.snapshot(key.orgId, now);
    } catch (err) {
      svc.log.error({ err, org: key.orgId }, 'limits record unreadable');
      throw new GatewayError('limits_unavailable');
    }
  }
  const report = buildLimitsReport({
    nowMs: now, flexRaceSlots: svc.flexSlots.limit, managedProviders: providers, snapshot,
    abuse: svc.config.abuse_limits, publishAbuseLimits: svc.config.abuse_limits.publish, trustedProxies: svc.config.trust_proxy.length,
  });
  sendJson(res, 200, serializeLimitsReport(report), { 'cache-control': 'no-store' });
}

/** Ready when not draining and the store answers; a database that cannot be reached is named, so a
 *  balancer stops sending managed traffic here while own keys keep working on the cached keys.
 *  SQLite's says what is wrong instead of `unreachable`: its last write failed (`unwritable`), it is
 *  `damaged`, or the file at its path was `deleted` or `replaced` under the running process. */
async function readyz(res: ServerResponse, svc: Services): Promise<void> {
  if (svc.shuttingDown) return sendJson(res, 503, '{"status":"shutting_down"}');
  if (!await svc.store.ready()) {
    const database = svc.store.degraded?.() ?? 'unreachable';
    return sendJson(res, 503, `{"status":"degraded","database":"${database}","store":"${svc.store.kind}"}`);
  }
  sendJson(res, 200, '{"status":"ready"}');
}
