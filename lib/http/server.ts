// The node:http server: a route table from method and path to a handler. No framework.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { GatewayError } from '../errors.ts';
import type { Services } from '../services.ts';
import { handleInference } from './pipeline.ts';
import { guard } from './auth.ts';
import { handleAdmin } from './admin.ts';
import { handleCountTokens } from './count-tokens.ts';
import { asGatewayError, errorBody, sendError, sendJson } from './reply.ts';
import { CALLER_CODECS, type CallerFormat } from '../formats/index.ts';
import { buildLimitsReport, serializeLimitsReport } from '../limits/report.ts';
import { catalogBody } from './models.ts';
import { usageReport, usageRequests } from './usage.ts';
import { handleManage } from './manage.ts';
import { serveDashboard } from './dashboard.ts';
import type { ApiKeyRecord } from '../store/orgs.ts';

/** Inference path → caller format: each caller format's codec names its endpoint's path. */
const INFERENCE: Record<string, CallerFormat> = Object.fromEntries(
  (Object.keys(CALLER_CODECS) as CallerFormat[]).map((format) => [CALLER_CODECS[format].endpoint.path, format]));

export function createHttpServer(svc: Services, adminToken: string | undefined): Server {
  const models = catalogBody(svc.catalog);
  // Request headers must arrive within timeouts.request_headers_ms (node checks open connections
  // every connectionsCheckingInterval); the body's limits are read by readBody (lib/http/body.ts).
  // requestTimeout stays 0: node's would also cut long-lived streamed answers' requests.
  const headersMs = svc.config.timeouts.request_headers_ms;
  const server = createServer({
    keepAliveTimeout: 65_000, requestTimeout: 0, headersTimeout: headersMs,
    connectionsCheckingInterval: headersMs ? Math.max(100, Math.min(1_000, Math.floor(headersMs / 4))) : 30_000,
  }, (req, res) => {
    dispatch(req, res, svc, adminToken, models).catch((err) => {
      svc.log.error({ err }, 'unhandled');
      if (!res.headersSent) sendError(res, 'plain', asGatewayError(err)); else res.destroy();
    });
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

async function dispatch(
  req: IncomingMessage, res: ServerResponse, svc: Services, adminToken: string | undefined, models: string,
): Promise<void> {
  const path = (req.url ?? '/').split('?', 1)[0]!;
  const format = INFERENCE[path];
  if (format) {
    if (req.method !== 'POST') return sendError(res, format, new GatewayError('method_not_allowed'));
    return handleInference(format, req, res, svc);
  }
  if (path === '/v1/messages/count_tokens') {
    if (req.method !== 'POST') return sendError(res, 'messages', new GatewayError('method_not_allowed'));
    return handleCountTokens(req, res, svc);
  }
  try {
    if (path.startsWith('/admin/v1/')) return await handleAdmin(req, res, svc, path, adminToken);
    if (path === '/v1/organization' || path.startsWith('/v1/organization/')) {
      return await handleManage(req, res, svc, path, await orgKey(req, svc));
    }
    if (path === '/dashboard' || path.startsWith('/dashboard/')) return serveDashboard(req, res, path);
    if (req.method !== 'GET') throw new GatewayError(path === '/v1/models' || path === '/v1/limits' ? 'method_not_allowed' : 'not_found');
    switch (path) {
      case '/healthz': return sendJson(res, 200, '{"status":"ok"}');
      case '/readyz': return readyz(res, svc);
      case '/metrics': {
        const body = await svc.metrics.registry.metrics();
        res.writeHead(200, { 'content-type': svc.metrics.registry.contentType });
        res.end(body);
        return;
      }
      case '/v1/models': {
        await guard(req, svc, { keyRate: false });
        return sendJson(res, 200, models);
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
    if (ge.code === 'internal_error') svc.log.error({ err }, 'internal error');
    sendError(res, 'plain', ge);
  }
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
 *  balancer stops sending managed traffic here while own keys keep working on the cached keys. */
async function readyz(res: ServerResponse, svc: Services): Promise<void> {
  if (svc.shuttingDown) return sendJson(res, 503, '{"status":"shutting_down"}');
  if (!await svc.store.ready()) return sendJson(res, 503, `{"status":"degraded","database":"unreachable","store":"${svc.store.kind}"}`);
  sendJson(res, 200, '{"status":"ready"}');
}
