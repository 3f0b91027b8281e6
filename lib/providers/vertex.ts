// cloud_a: Gemini on Vertex AI (generateContent / streamGenerateContent?alt=sse). The org's cloud
// key is a service-account JSON; google-auth-library mints and caches the OAuth access token.
// The token is minted at Google's token endpoint, or at a token_uri the operator allows (the one of
// its own cloud_a credential, such as the simulator's, and routes.cloud_a.allowed_token_uris): a
// token_uri is where the gateway POSTs from inside its network, so an organization may not choose it.
// A token request is an upstream call like any other: bounded by timeouts.upstream_connect_ms +
// upstream_first_byte_ms (a stalled token endpoint fails the attempt, which is retried or fallen
// back from), and a token Vertex refuses (401) is dropped (authRejected) rather than used until it
// expires. It goes through the egress proxy when the gateway's settings send its endpoint there,
// and straight out when they do not (gaxios' own reading of the environment is not used).
import { createHash } from 'node:crypto';
import { globalAgent as httpAgent } from 'node:http';
import { globalAgent as httpsAgent } from 'node:https';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import type { JWT, JWTOptions } from 'google-auth-library';
import type { Gaxios, GaxiosOptions } from 'gaxios';
import type { Logger } from '../log.ts';
import { DEFAULT_TIMEOUTS, type TimeoutsConfig } from '../timeouts.ts';
import type { RouteAdapter } from './types.ts';
import { upstreamJson } from './json-body.ts';
import { originAndBase } from './url.ts';
import { GatewayError } from '../errors.ts';
import { UnusableCredential } from './unusable-credential.ts';
import { EgressProxy, tunnelled, type EgressProxyConfig, type ProxyRoute } from './egress-proxy.ts';

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
/** Google's token endpoint under the names service-account files have carried: all minted at
 *  GOOGLE_TOKEN_URL, the library's own. */
const GOOGLE_TOKEN_URIS: ReadonlySet<string> = new Set([
  GOOGLE_TOKEN_URL, 'https://accounts.google.com/o/oauth2/token', 'https://www.googleapis.com/oauth2/v4/token',
]);

/** The documented shape of a cloud_a key: {"key": <service-account JSON>, "project"?, "location"?}. */
export interface VertexCredential {
  key: ServiceAccount | string;
  project?: string;
  location?: string;
}

/** The fields of a Google service-account JSON the gateway reads. */
interface ServiceAccount { client_email: string; private_key: string; project_id?: string; token_uri?: string }

/** What the operator allows besides Google's token endpoint. */
export interface CloudAOptions {
  /** The operator's own cloud_a credential (config.managed.cloud_a): its token_uri is allowed. */
  managed?: unknown;
  /** routes.cloud_a.allowed_token_uris. */
  allowedTokenUris?: readonly string[];
  /** Where a refused credential or a failed token mint is logged (the caller never reads why). */
  log?: Logger;
  /** The configuration's upstream timeouts, which bound a token request (tokenWithinMs). */
  timeouts?: Pick<TimeoutsConfig, 'upstream_connect_ms' | 'upstream_first_byte_ms'>;
  /** The gateway's egress proxy settings (config.egress_proxy), which token requests follow too. */
  egressProxy?: EgressProxyConfig;
}

/** How long an access token may take to arrive: a token request is a connect and an answer, so
 *  upstream_connect_ms + upstream_first_byte_ms (70 s by default). A disabled (0) one counts as its
 *  default: a token request that never ends would hold every request on its service account. */
function tokenWithinMs(t: CloudAOptions['timeouts'] = DEFAULT_TIMEOUTS): number {
  return (t.upstream_connect_ms || DEFAULT_TIMEOUTS.upstream_connect_ms)
    + (t.upstream_first_byte_ms || DEFAULT_TIMEOUTS.upstream_first_byte_ms);
}

// Every adapter built in this process adds its operator's token URIs here, for the one check that
// has no adapter at hand: the admin and manage handlers validate an uploaded key through
// parseVertexCredential(body) alone. A process runs one gateway (tests run several, each allowing
// its own simulator's endpoint); the adapter itself checks against its own list only.
const registeredTokenUris = new Set<string>();

/** The operator's allowed token URIs: its own credential's and the configured ones. */
function operatorTokenUris(opts: CloudAOptions): Set<string> {
  const allowed = new Set(opts.allowedTokenUris ?? []);
  const managed = opts.managed as VertexCredential | undefined;
  let sa: unknown;
  try { sa = typeof managed?.key === 'string' ? JSON.parse(managed.key) : managed?.key; } catch { sa = undefined; }
  const uri = (sa as ServiceAccount | undefined)?.token_uri;
  if (typeof uri === 'string' && uri) allowed.add(uri);
  return allowed;
}

// At most this many auth clients (each holds a service account's key and its cached token) are
// kept, least recently used first out: every uploaded service account would otherwise stay forever.
const MAX_CLIENTS = 256;
const clients = new Map<string, JWT>();

// google-auth-library and gaxios are loaded on the first cloud_a call, not at start: together
// they are ≈ 16 MB of resident memory a gateway without cloud_a traffic never needs. The load is
// one promise, awaited before the cache is read: requests that arrive while it runs then find the
// client the first of them made (an await between the lookup and the insert gave each its own
// client, and so its own token request: 100 requests on a cold process minted 20 tokens).
interface AuthLibrary { JWT: typeof JWT; Gaxios: typeof Gaxios }
let authLibrary: Promise<AuthLibrary> | undefined;
function loadAuthLibrary(): Promise<AuthLibrary> {
  return authLibrary ??= Promise.all([import('google-auth-library'), import('gaxios')]).then(
    ([auth, gaxios]) => ({ JWT: auth.JWT, Gaxios: gaxios.Gaxios }),
    (err: unknown) => { authLibrary = undefined; throw err; },
  );
}

/** How token requests to one endpoint travel; `via` tells apart the clients of gateways that
 *  send them differently (tests run several in one process). */
interface TokenTransport { via: string; options: Pick<GaxiosOptions, 'agent' | 'fetchImplementation'> }

/** Straight out: node's own agents, as gaxios' fetch uses them without a proxy (an agent given
 *  keeps gaxios from choosing a proxy of the environment's). */
const DIRECT: TokenTransport = { via: 'direct', options: { agent: (url) => (url.protocol === 'http:' ? httpAgent : httpsAgent) } };

/** Through the egress proxy, on a tunnelled dispatcher made at the first token request. undici's
 *  fetch fails with "fetch failed", the why in its cause: the message says both (it is logged). */
function proxiedTransport(tokenUri: string, proxy: ProxyRoute, connectMs: number): TokenTransport {
  let dispatcher: Dispatcher | undefined;
  const viaProxy = async (input: Parameters<typeof undiciFetch>[0], init?: Parameters<typeof undiciFetch>[1]) => {
    dispatcher ??= tunnelled(new URL(tokenUri).origin, proxy, {}, connectMs);
    try {
      return await undiciFetch(input, { ...init, dispatcher });
    } catch (err) {
      const cause = (err as { cause?: { message?: unknown } }).cause;
      throw cause ? new Error(`${(err as Error).message}: ${String(cause.message)}`, { cause: err }) : err;
    }
  };
  return { via: `${proxy.uri}\0${proxy.token ?? ''}`, options: { fetchImplementation: viaProxy as unknown as typeof fetch } };
}

/** The cache key of a service account's client (its token's limit and transport too: tests run
 *  gateways with different timeouts and proxies in one process). */
function clientId(sa: ServiceAccount, tokenUri: string, tokenMs: number, transport: TokenTransport): string {
  return createHash('sha256').update(sa.client_email + '\0' + sa.private_key + '\0' + tokenUri + '\0' + tokenMs + '\0' + transport.via)
    .digest('hex');
}

const tokenUriOf = (sa: ServiceAccount): string =>
  (sa.token_uri && !GOOGLE_TOKEN_URIS.has(sa.token_uri) ? sa.token_uri : GOOGLE_TOKEN_URL);

async function jwtFor(sa: ServiceAccount, tokenMs: number, transportFor: (tokenUri: string) => TokenTransport): Promise<JWT> {
  const { JWT, Gaxios } = await loadAuthLibrary();
  // Nothing awaits from here to the insert.
  const tokenUri = tokenUriOf(sa);
  const transport = transportFor(tokenUri);
  const id = clientId(sa, tokenUri, tokenMs, transport);
  let client = clients.get(id);
  if (client) {
    clients.delete(id);   // re-inserted below: the Map's order is the recency order
  } else {
    // The client's timeout ends a stalled token request itself (the library does not retry one
    // that timed out): the library shares one in-flight request among all of a service account's
    // callers, and each would otherwise wait on it for as long as the socket stays open.
    const transporter = new Gaxios({ timeout: tokenMs, ...transport.options });
    if (tokenUri !== GOOGLE_TOKEN_URL) {
      // The library always POSTs to GOOGLE_TOKEN_URL; an allowed private endpoint is reached by
      // rewriting that one URL (checked by parseVertexCredential before this is ever built).
      transporter.interceptors.request.add({
        resolved: async (cfg) => (String(cfg.url) === GOOGLE_TOKEN_URL ? { ...cfg, url: new URL(tokenUri) } : cfg),
      });
    }
    client = new JWT({
      email: sa.client_email,
      key: sa.private_key,
      scopes: ["https://www.googleapis.com/auth/cloud-platform"],
      transporter: transporter as unknown as JWTOptions["transporter"],
    });
  }
  clients.set(id, client);
  if (clients.size > MAX_CLIENTS) clients.delete(clients.keys().next().value!);
  return client;
}

/** Vertex refused a token of this service account (401: revoked, or the key behind it disabled or
 *  deleted): its client goes, with the token, so the next request mints a new one (a DELETE and
 *  PUT of the same key could not: the cache is keyed by the key's contents). A client that holds
 *  no token yet stays: it replaced the refused one and is minting (several requests sent with the
 *  refused token fail together, and one new token serves them all). */
function forgetClient(sa: ServiceAccount, tokenMs: number, transportFor: (tokenUri: string) => TokenTransport): void {
  const tokenUri = tokenUriOf(sa);
  const id = clientId(sa, tokenUri, tokenMs, transportFor(tokenUri));
  if (clients.get(id)?.credentials.access_token) clients.delete(id);
}

/** How many auth clients are cached (the bound's test reads it). */
export const cachedAuthClients = (): number => clients.size;

/** A Vertex AI location name (us-central1, europe-west4, global, us): it becomes part of a host name. */
const LOCATION = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Reads a cloud_a key. `allowedTokenUris` are the operator's token endpoints besides Google's;
 *  without them, those of every adapter built in this process (the upload check).
 *  `defaultLocation`: the location of a key that names none. */
export function parseVertexCredential(
  raw: unknown, allowedTokenUris: ReadonlySet<string> = registeredTokenUris, defaultLocation = 'us-central1',
): { sa: ServiceAccount; project: string; location: string } {
  const credential = raw as VertexCredential;
  let sa: any;
  // A parse error's message quotes the text's first bytes (key material): a fixed message instead.
  try { sa = typeof credential?.key === 'string' ? JSON.parse(credential.key) : credential?.key; } catch { sa = undefined; }
  if (!sa?.client_email || !sa?.private_key) {
    throw new GatewayError('provider_key_missing', 'The cloud_a key must be {"key": <service-account JSON>, "project"?, "location"?}.');
  }
  const project = credential.project ?? sa.project_id;
  if (!project) throw new GatewayError('provider_key_missing', 'The cloud_a key names no project.');
  const tokenUri: unknown = sa.token_uri;
  if (tokenUri !== undefined && tokenUri !== null && tokenUri !== ''
    && !(typeof tokenUri === 'string' && (GOOGLE_TOKEN_URIS.has(tokenUri) || allowedTokenUris.has(tokenUri)))) {
    throw new GatewayError('provider_key_missing', 'The cloud_a key\'s token_uri is not Google\'s token endpoint nor one the service allows.');
  }
  const location = credential.location ?? defaultLocation;
  if (typeof location !== 'string' || location.length > 64 || !LOCATION.test(location)) {
    throw new GatewayError('provider_key_missing', 'The cloud_a key\'s location is not a Vertex AI location name.');
  }
  return { sa, project, location };
}

/** Vertex AI's public endpoints: {location}-aiplatform.googleapis.com, aiplatform.googleapis.com
 *  (global) and aiplatform.{us|eu}.rep.googleapis.com (multi-region). */
const REGIONAL_HOST = /^([a-z0-9-]+)-aiplatform\.googleapis\.com$/;
const MULTI_REGION_HOST = /^aiplatform\.(us|eu)\.rep\.googleapis\.com$/;
const GLOBAL_HOST = 'aiplatform.googleapis.com';

/** The public endpoint's host for a location. */
export function vertexHost(location: string): string {
  if (location === 'global') return GLOBAL_HOST;
  if (location === 'us' || location === 'eu') return `aiplatform.${location}.rep.googleapis.com`;
  return `${location}-aiplatform.googleapis.com`;
}

/** Where a request for `location` goes. A base URL on Vertex AI's public endpoint names one
 *  location's host, and a location is served at its own: the request goes to the key's location's
 *  host (the configured one's location is the default of a key that names none). Any other base
 *  URL (a proxy, a Private Service Connect endpoint, the simulator) is where every request goes. */
export function vertexEndpoint(baseUrl: string): { defaultLocation: string; originFor(location: string): string } {
  const { origin, base } = originAndBase(baseUrl);
  const url = new URL(origin);
  const host = url.protocol === 'https:' && !url.port && !base ? url.hostname : '';
  const configured = host === GLOBAL_HOST ? 'global' : REGIONAL_HOST.exec(host)?.[1] ?? MULTI_REGION_HOST.exec(host)?.[1];
  if (configured === undefined) return { defaultLocation: 'us-central1', originFor: () => origin };
  const origins = new Map<string, string>();
  return {
    defaultLocation: configured,
    originFor(location) {
      let regional = origins.get(location);
      if (regional === undefined) {
        regional = `https://${vertexHost(location)}`;
        if (origins.size < 128) origins.set(location, regional);   // Google has a few dozen locations
      }
      return regional;
    },
  };
}

export function cloudA(baseUrl: string, opts: CloudAOptions = {}): RouteAdapter {
  const { base } = originAndBase(baseUrl);
  const endpoint = vertexEndpoint(baseUrl);
  const allowed = operatorTokenUris(opts);
  for (const uri of allowed) registeredTokenUris.add(uri);
  const tokenMs = tokenWithinMs(opts.timeouts);
  // A key's token endpoint is Google's or one of `allowed` (parseVertexCredential): each one's
  // transport is decided here, once.
  const egress = new EgressProxy(opts.egressProxy);
  const transports = new Map([GOOGLE_TOKEN_URL, ...allowed].map((uri) => {
    const proxy = egress.proxyFor(uri);
    return [uri, proxy ? proxiedTransport(uri, proxy, opts.timeouts?.upstream_connect_ms ?? DEFAULT_TIMEOUTS.upstream_connect_ms) : DIRECT];
  }));
  const transportFor = (tokenUri: string): TokenTransport => transports.get(tokenUri) ?? DIRECT;

  /** The key, checked again at use: one stored before token_uri was checked must not be used. */
  function usable(credential: unknown): ReturnType<typeof parseVertexCredential> {
    try {
      return parseVertexCredential(credential, allowed, endpoint.defaultLocation);
    } catch (err) {
      opts.log?.warn({ route: 'cloud_a', reason: (err as Error).message }, 'cloud_a credential refused');
      throw new UnusableCredential(false);
    }
  }

  /** An access token, or an UnusableCredential: the token server's answer (in the library's error
   *  message) is logged, never answered; the error object itself holds the signed grant. */
  async function accessToken(sa: ServiceAccount): Promise<string> {
    let failure: unknown;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const client = await jwtFor(sa, tokenMs, transportFor);
      // The caller's own wait has the same limit, whatever the library does in between (it retries
      // a token server's 5xx or 429; gaxios 7 happens to end those retries at the first try's
      // timeout, a detail of its own this does not rely on).
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no access token from the token endpoint within ${tokenMs} ms`)), tokenMs);
      });
      const { token } = await Promise.race([client.getAccessToken(), stalled]);
      if (token) return token;
    } catch (err) {
      failure = err;
    } finally {
      clearTimeout(timer);
    }
    const err = failure as { message?: unknown; status?: unknown; response?: { status?: unknown } } | undefined;
    opts.log?.warn({
      route: 'cloud_a', client_email: sa.client_email, status: err?.response?.status ?? err?.status,
      reason: err ? String(err.message).slice(0, 300) : 'no access token in the answer',
    }, 'cloud_a access token not minted');
    throw new UnusableCredential(true);
  }

  return {
    route: 'cloud_a',
    wires: ['vertex'],
    flex: false,
    async build({ body, model, stream, credential }) {
      const { sa, project, location } = usable(credential);
      const token = await accessToken(sa);
      const verb = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
      return {
        origin: endpoint.originFor(location),
        path: `${base}/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}`
          + `/publishers/google/models/${encodeURIComponent(model)}:${verb}`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: upstreamJson(body),
      };
    },
    authRejected(credential) {
      let sa: ServiceAccount;
      try { ({ sa } = parseVertexCredential(credential, allowed, endpoint.defaultLocation)); } catch { return; }
      forgetClient(sa, tokenMs, transportFor);
    },
  };
}
