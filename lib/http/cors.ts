// Browser callers on other origins (CORS): the official SDKs run in a page with
// dangerouslyAllowBrowser, which the browser lets read the API's answers only when they say the
// page's origin may. Off unless cors.allowed_origins names origins (or "*").
//
// Served on /v1/... only: the admin API and the dashboard (same origin) never answer CORS, so an
// admin token cannot be used from another origin's page. The credentials are headers
// (Authorization, x-api-key, x-goog-api-key), never cookies: Access-Control-Allow-Credentials is
// not sent, so a page can send only the key it holds itself.
import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { CorsConfig } from '../config.ts';

/** The configuration compiled at start: undefined when off, so the request path pays one check. */
export interface CorsPolicy {
  /** "*": every origin. */
  any: boolean;
  /** Each listed origin's answer headers, built once. */
  listed: ReadonlyMap<string, readonly string[]>;
}

export function corsPolicy(config: CorsConfig): CorsPolicy | undefined {
  if (config.allowed_origins.length === 0) return undefined;
  const origins = config.allowed_origins.filter((origin) => origin !== '*');
  return { any: origins.length < config.allowed_origins.length, listed: new Map(origins.map((origin) => [origin, answerHeaders(origin)])) };
}

/** The paths CORS is answered on: the API (inference, count_tokens, models, limits, usage,
 *  organization management), all under /v1/; not /admin/v1/, /dashboard, /metrics or the probes. */
export const isCorsPath = (path: string): boolean => path.startsWith('/v1/');

const allowed = (policy: CorsPolicy, origin: string): boolean => policy.any || policy.listed.has(origin);

/** The gateway's answer headers a page's code may read (a browser shows it only the CORS-safelisted
 *  ones otherwise): the request id under both names, the SDKs' retry hints and the x-service-*
 *  routing, cost and spend headers (test/http/cors.test.ts checks every x-service-* name of lib/ is here). */
export const EXPOSED_HEADERS = [
  'x-request-id', 'request-id', 'retry-after', 'x-should-retry',
  'x-service-served-provider', 'x-service-routing-reason', 'x-service-flex-applied', 'x-service-flex-reason',
  'x-service-retries', 'x-service-cost', 'x-service-spend-remaining', 'x-service-spend-as-of',
].join(', ');

/** How long a browser may reuse a preflight's answer, in seconds (Chromium keeps one at most 2 h). */
const MAX_AGE_S = '7200';

/** The headers of an answer to an allowed origin, as raw name/value pairs: the origin echoed, the
 *  answer varying by it (a cache must not serve one origin's answer to another), and the gateway's
 *  headers exposed. */
const answerHeaders = (origin: string): readonly string[] =>
  ['vary', 'Origin', 'access-control-allow-origin', origin, 'access-control-expose-headers', EXPOSED_HEADERS];

/** An origin not allowed: no CORS header, but the answer still varies by Origin. */
const VARY_ONLY: readonly string[] = ['vary', 'Origin'];

/** The CORS headers of the answer to a request naming `origin` (lib/http/server.ts adds them as the
 *  head is written, so every answer carries them: errors, 401s, event streams). A listed origin's
 *  are built once; under "*" an unlisted one's per request. */
export const corsHeadersFor = (policy: CorsPolicy, origin: string): readonly string[] =>
  policy.listed.get(origin) ?? (policy.any ? answerHeaders(origin) : VARY_ONLY);

/** A head's headers (writeHead's object, or a raw array) with the CORS pairs appended, as the raw
 *  name/value array node writes as it is: as cheap as three more headers in the object (setHeader
 *  before the handler instead makes node merge the head's headers one by one: 2.0 µs a head against
 *  1.2, and 0.8 without CORS, node 20, a head of eight headers). */
export function withCorsHeaders(headers: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined, cors: readonly string[]): OutgoingHttpHeader[] {
  const raw: OutgoingHttpHeader[] = [];
  // node takes an array flat ([name, value, …]) or as pairs ([[name, value], …]).
  if (Array.isArray(headers)) raw.push(...(Array.isArray(headers[0]) ? headers.flat(1) : headers));
  else if (headers) for (const name in headers) raw.push(name, headers[name] as OutgoingHttpHeader);
  for (const part of cors) raw.push(part);
  return raw;
}

/** Is this an OPTIONS the browser sends before a request (a preflight), rather than an OPTIONS of
 *  its own (which is routed as today: 405)? */
export const isPreflight = (req: IncomingMessage): boolean =>
  req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;

/** A preflight's answer, before any key, limit or ledger is read (the browser sends none of the
 *  request's credentials): 204 allowing the path's methods and the headers asked for (the SDKs
 *  send their own: x-stainless-*, anthropic-version, x-goog-api-client…; echoing the list keeps a
 *  new SDK header working). An origin not allowed gets 403 with no CORS headers: the browser
 *  blocks the request ("No 'Access-Control-Allow-Origin' header"), and curl shows the refusal. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, policy: CorsPolicy, origin: string, methods: string): void {
  if (!allowed(policy, origin)) {
    res.writeHead(403, { vary: 'Origin', 'content-length': 0 });
    res.end();
    return;
  }
  const headers: Record<string, string> = {
    vary: 'Origin, Access-Control-Request-Headers', 'access-control-allow-origin': origin, 'access-control-allow-methods': methods,
    'access-control-max-age': MAX_AGE_S,
  };
  const asked = req.headers['access-control-request-headers'];
  if (asked) headers['access-control-allow-headers'] = asked;
  res.writeHead(204, headers);
  res.end();
}
