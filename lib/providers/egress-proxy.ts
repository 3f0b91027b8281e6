// Upstream calls through an HTTP forward proxy: the standard HTTPS_PROXY, HTTP_PROXY and NO_PROXY,
// read as undici's EnvHttpProxyAgent reads them (lower-case names win; NO_PROXY entries are hosts,
// domain suffixes, host:port, or `*`), with two differences: an https origin uses HTTPS_PROXY only
// (undici falls back to HTTP_PROXY, curl does not: a proxy named for plain http does not receive
// the provider traffic), and bracketed or bare IPv6 addresses and CIDR ranges in NO_PROXY are
// understood. Loopback is not implied: NO_PROXY=localhost,127.0.0.1 keeps local providers direct.
// Whether an origin is
// proxied is decided once, when its pool is made (lib/stream/pools.ts); an origin that is not keeps
// the plain Pool. A proxied one tunnels with HTTP CONNECT (undici's ProxyAgent), its connection
// setup (the proxy's TCP, its CONNECT answer, the provider's TLS inside) bounded as a whole by the
// connect timeout, and its failures named after the proxy (host:port, never its credentials).
import { BlockList, isIP } from 'node:net';
import { errors, Pool, ProxyAgent, type buildConnector, type Dispatcher } from 'undici';

/** The settings: a proxy URL for http and for https origins, and the NO_PROXY list. */
export interface EgressProxyConfig {
  http?: string;
  https?: string;
  no_proxy?: string;
}

/** The settings of the process's environment, lower-case names first; none when nothing is set. */
export function egressProxyFromEnv(env: NodeJS.ProcessEnv): EgressProxyConfig | undefined {
  const pick = (name: string): string | undefined => (env[name.toLowerCase()] ?? env[name]) || undefined;
  const config: EgressProxyConfig = { http: pick('HTTP_PROXY'), https: pick('HTTPS_PROXY'), no_proxy: pick('NO_PROXY') };
  return config.http || config.https ? config : undefined;
}

/** A proxy as its calls use it: its URL without credentials, the Proxy-Authorization they make,
 *  and how messages name it. */
export interface ProxyRoute {
  uri: string;
  token?: string;
  shown: string;
}

/** A proxy URL as curl takes it: without a scheme, http://. */
function proxyUrl(value: string): URL {
  return new URL(value.includes('://') ? value : `http://${value}`);
}

function proxyRoute(value: string): ProxyRoute {
  const url = proxyUrl(value);
  const token = url.username
    ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
    : undefined;
  url.username = '';
  url.password = '';
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return { uri: url.origin, token, shown: `${url.protocol}//${url.hostname}:${port}` };
}

/** What is wrong with the settings: a proxy URL that is not an http or https one. The value is
 *  not quoted (it may carry a password). */
export function egressProxyProblems(config: EgressProxyConfig | undefined): string[] {
  const problems: string[] = [];
  for (const scheme of ['http', 'https'] as const) {
    const value = config?.[scheme];
    if (value === undefined) continue;
    let url: URL | undefined;
    try { url = proxyUrl(value); } catch { url = undefined; }
    const name = `egress_proxy.${scheme} (${scheme.toUpperCase()}_PROXY)`;
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
      problems.push(`${name} must be an http:// or https:// proxy URL, such as http://proxy.example:3128`);
    } else if (!decodes(url.username) || !decodes(url.password)) {
      problems.push(`${name} has a user or password that is not percent-encoded (a % not followed by two hex digits): write % as %25`);
    }
  }
  return problems;
}

const decodes = (text: string): boolean => { try { decodeURIComponent(text); return true; } catch { return false; } };

/** One NO_PROXY entry: a host (its subdomains too), on one port or (0) any; or an address range. */
type NoProxyEntry = { host: string; port: number } | { range: BlockList };

/** NO_PROXY's entries (comma or space separated): `host`, `.domain` or `*.domain` (the leading dot
 *  or star ignored), `host:port`, `[v6]`, `[v6]:port` or a bare v6 address, `*` for all, and an
 *  address range in CIDR notation (`10.0.0.0/8`, `fd00::/8`: Kubernetes' usual NO_PROXY), which
 *  matches a provider given by address (names are not resolved to be matched, as curl). */
export function parseNoProxy(value: string | undefined): NoProxyEntry[] {
  const entries: NoProxyEntry[] = [];
  for (const raw of (value ?? '').split(/[,\s]+/)) {
    if (!raw) continue;
    const cidr = /^([^/]+)\/(\d{1,3})$/.exec(raw);
    const family = cidr ? isIP(cidr[1]!) : 0;
    if (cidr && family) {
      const range = new BlockList();
      try { range.addSubnet(cidr[1]!, Number(cidr[2]), family === 6 ? 'ipv6' : 'ipv4'); } catch { continue; }
      entries.push({ range });
      continue;
    }
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw);
    const hostPort = /^([^:]+):(\d+)$/.exec(raw);
    const [host, port] = bracketed ? [bracketed[1]!, bracketed[2]] : hostPort ? [hostPort[1]!, hostPort[2]] : [raw, undefined];
    entries.push({ host: host.replace(/^\*?\./, '').toLowerCase(), port: port ? Number(port) : 0 });
  }
  return entries;
}

/** Does NO_PROXY exempt this host (lower case, IPv6 without brackets) and port? */
export function noProxyMatches(entries: readonly NoProxyEntry[], host: string, port: number): boolean {
  const family = isIP(host);
  return entries.some((e) => ('range' in e
    ? family !== 0 && e.range.check(host, family === 6 ? 'ipv6' : 'ipv4')
    : (e.port === 0 || e.port === port) && (e.host === '*' || host === e.host || host.endsWith(`.${e.host}`))));
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** The settings, resolved once: which proxy, if any, an origin's calls go through. */
export class EgressProxy {
  private readonly http: ProxyRoute | undefined;
  private readonly https: ProxyRoute | undefined;
  private readonly noProxy: NoProxyEntry[];

  constructor(private readonly config: EgressProxyConfig | undefined) {
    this.http = config?.http ? proxyRoute(config.http) : undefined;
    this.https = config?.https ? proxyRoute(config.https) : undefined;
    this.noProxy = parseNoProxy(config?.no_proxy);
  }

  /** The proxy for an origin (scheme://host[:port]), or undefined: it goes direct. */
  proxyFor(origin: string): ProxyRoute | undefined {
    const url = new URL(origin);
    const proxy = url.protocol === 'https:' ? this.https : url.protocol === 'http:' ? this.http : undefined;
    if (!proxy) return undefined;
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    return noProxyMatches(this.noProxy, host, Number(url.port) || DEFAULT_PORTS[url.protocol]!) ? undefined : proxy;
  }

  /** The start log's words ("upstream calls go through proxy …"), or undefined when none is set. */
  describe(): string | undefined {
    const via = [this.https && `${this.https.shown} (https)`, this.http && `${this.http.shown} (http)`].filter(Boolean);
    if (via.length === 0) return undefined;
    return `upstream calls go through proxy ${via.join(', ')}${this.config?.no_proxy ? ` (NO_PROXY: ${this.config.no_proxy})` : ''}`;
  }
}

/** A proxied origin's pool settings: a Pool's, but for `connect`. */
export type TunnelOptions = Omit<Pool.Options, 'connect'>;

/** A dispatcher for `origin` that tunnels through `proxy`, with `options` for the origin's pool and
 *  its connection setup bounded by connectMs (0: undici's own 10 s, as a Pool's). The calls'
 *  options need no `origin`: it is added here, as ProxyAgent needs it. */
export function tunnelled(origin: string, proxy: ProxyRoute, options: TunnelOptions, connectMs: number): Dispatcher {
  const bound = connectMs || 10_000;
  const agent = new ProxyAgent({
    ...options,
    uri: proxy.uri,
    token: proxy.token,
    proxyTls: { timeout: bound },
    requestTls: { timeout: bound },
    // The proxy's own client carries CONNECTs only: one unanswered for longer is let go.
    clientFactory: (url, opts) => new Pool(url, { ...opts, headersTimeout: bound }),
    factory: (target, opts) => new Pool(target, { ...options, connect: named((opts as Pool.Options).connect as buildConnector.connector, proxy, bound) }),
  });
  return agent.compose((dispatch) => (opts, handler) => dispatch({ ...opts, origin }, handler));
}

/** ProxyAgent's tunnel setup, bounded by `ms` as a whole, its failures named after the proxy
 *  (their undici code kept: a timeout is counted as upstream_connect). */
function named(tunnel: buildConnector.connector, proxy: ProxyRoute, ms: number): buildConnector.connector {
  return (opts, callback) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      callback(viaProxy(new errors.ConnectTimeoutError(`no tunnel within ${ms} ms`), proxy), null);
    }, ms);
    tunnel(opts, (err, socket) => {
      if (settled) { socket?.destroy(); return; }
      settled = true;
      clearTimeout(timer);
      if (err) callback(viaProxy(err, proxy), null); else callback(null, socket!);
    });
  };
}

function viaProxy(err: Error, proxy: ProxyRoute): Error {
  return Object.assign(new Error(`through the egress proxy ${proxy.shown}: ${err.message}`, { cause: err }), {
    code: (err as { code?: unknown }).code,
  });
}
