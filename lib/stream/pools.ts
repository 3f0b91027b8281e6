// One undici Pool per route and upstream origin, keep-alive, created on first use and reused
// (no TCP and TLS handshake per request), sized by routes.<route>.connections (else capacity.connections). Every upstream call
// goes through dispatch(): it takes a slot of the route's capacity gate (lib/providers/capacity.ts),
// applies the upstream timeouts (connect, first byte, idle between chunks), counts timeouts in the
// metrics, and gives the slot back when the response ends or fails, whatever ended it. Every call
// asks for an uncompressed answer (Accept-Encoding: identity: without the header any coding is
// acceptable, RFC 9110 §12.5.3, and undici's dispatch decodes none); an answer compressed anyway
// fails the attempt with words that say so, not with compressed bytes in an error message.
// An origin the egress proxy settings send through a proxy gets a dispatcher that tunnels through
// it (lib/providers/egress-proxy.ts), decided when its pool is made: the others keep the plain Pool.
import { Pool, type Dispatcher } from 'undici';
import type { RouteName } from '../routes.ts';
import type { UpstreamRequest } from '../providers/types.ts';
import { DEFAULT_CAPACITY, RouteGate, type CapacityConfig } from '../providers/capacity.ts';
import { DEFAULT_TIMEOUTS, type TimeoutsConfig } from '../timeouts.ts';
import type { Metrics } from '../metrics.ts';
import { EgressProxy, tunnelled, type EgressProxyConfig } from '../providers/egress-proxy.ts';

/** What one attempt may use: whose request it is, how long it may wait for a slot, and how long
 *  the upstream may take to answer (a flex attempt's first byte may take its whole deadline). */
/** `totalMs`: the whole answer's bound (the non-streamed fast path), from dispatch to its end. */
/** `flex`: a flex attempt (within capacity.flex_share of the route's connections). */
export interface UpstreamTerms { org: string; waitMs: number; firstByteMs: number; totalMs?: number; flex?: boolean }

/** The code of the error a non-streamed answer ends with when it does not complete in totalMs. */
const NONSTREAM_TIMEOUT = 'GATEWAY_UPSTREAM_NONSTREAM_TIMEOUT';

const TIMEOUT_EDGE: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'upstream_connect',
  UND_ERR_HEADERS_TIMEOUT: 'upstream_first_byte',
  UND_ERR_BODY_TIMEOUT: 'upstream_idle',
  [NONSTREAM_TIMEOUT]: 'upstream_nonstream',
};

/** The settings the pools read (lib/config.ts GatewayConfig is one). */
export interface PoolSettings {
  routes: Partial<Record<RouteName, { connections?: number }>>;
  timeouts?: TimeoutsConfig;
  capacity?: CapacityConfig;
  /** HTTPS_PROXY, HTTP_PROXY and NO_PROXY (lib/main.ts reads them); absent: every call goes direct. */
  egress_proxy?: EgressProxyConfig;
}

export class Pools {
  private readonly pools = new Map<string, Dispatcher>();
  private readonly gates = new Map<RouteName, RouteGate>();
  private readonly timeouts: TimeoutsConfig;
  private readonly capacity: CapacityConfig;
  private readonly egress: EgressProxy;

  constructor(private readonly config: PoolSettings = { routes: {} }, private readonly metrics?: Metrics) {
    this.timeouts = config.timeouts ?? DEFAULT_TIMEOUTS;
    this.capacity = config.capacity ?? DEFAULT_CAPACITY;
    this.egress = new EgressProxy(config.egress_proxy);
  }

  connections(route: RouteName): number {
    return this.config.routes[route]?.connections ?? this.capacity.connections;
  }

  gate(route: RouteName): RouteGate {
    let gate = this.gates.get(route);
    if (!gate) {
      gate = new RouteGate({
        connections: this.connections(route), queue: this.capacity.queue, orgShare: this.capacity.org_share, flexShare: this.capacity.flex_share,
      });
      this.gates.set(route, gate);
    }
    return gate;
  }

  get(route: RouteName, origin: string): Dispatcher {
    const id = `${route} ${origin}`;
    let pool = this.pools.get(id);
    if (!pool) {
      const options = { connections: this.connections(route), pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 };
      const proxy = this.egress.proxyFor(origin);
      pool = proxy
        ? tunnelled(origin, proxy, options, this.timeouts.upstream_connect_ms)
        : new Pool(origin, { ...options, connect: { timeout: this.timeouts.upstream_connect_ms || undefined } });
      this.pools.set(id, pool);
    }
    return pool;
  }

  /** Dispatches one upstream request inside the route's capacity: at once when a slot is free,
   *  else when one frees up. The handler sees undici's calls unchanged; the slot is given back at
   *  the response's end or error (an abort included). refuse() gets a CapacityRefused, or the
   *  error of a dispatch that throws. Returns a cancel for a request still waiting for a slot. */
  dispatch(
    route: RouteName, req: UpstreamRequest, handler: UpstreamHandler, terms: UpstreamTerms | undefined,
    refuse: (err: Error) => void,
  ): (() => void) | undefined {
    const t = terms ?? { org: '', waitMs: this.capacity.wait_ms, firstByteMs: this.timeouts.upstream_first_byte_ms };
    return this.gate(route).acquire(t.org, t.waitMs, (release) => {
      try {
        this.get(route, req.origin).dispatch({
          method: 'POST', path: req.path,
          ...(req.body.length > BODY_HELD_MAX ? sentOnce(req) : { headers: uncompressed(req.headers), body: req.body }),
          headersTimeout: t.firstByteMs, bodyTimeout: this.timeouts.upstream_idle_ms,
        }, new GatedHandler(handler, release, this, t.totalMs));
      } catch (err) {
        release();
        refuse(err as Error);
      }
    }, (err) => {
      this.metrics?.capacityRefusals.inc({ route, reason: err.reason });
      refuse(err);
    }, t.flex);
  }

  /** Each route's slots now (for the gauges), of the routes that have been used. */
  load(): Array<{ route: RouteName; inUse: number; flexInUse: number; queued: number }> {
    return [...this.gates].map(([route, gate]) => ({ route, inUse: gate.inUse, flexInUse: gate.flexInUse, queued: gate.queued }));
  }

  /** Counts an upstream error that is one of undici's timeouts in the metrics. */
  noteTimeout(err: unknown): void {
    const edge = TIMEOUT_EDGE[(err as { code?: string })?.code ?? ''];
    if (edge) this.metrics?.timeouts.inc({ edge });
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.destroy()));
    this.pools.clear();
  }
}

/** undici keeps a request's Buffer or string body for as long as the request lives, which for a
 *  stream is until its last event: a coding agent's 200 KB prompt, held for minutes by every open
 *  stream. A body over this size goes as a one-chunk iterable instead, which undici lets go once
 *  written (with its Content-Length, so it is not sent chunked); a small one stays as it is, the
 *  cheaper path to write. Measured in characters for a string body, at least as many bytes. */
const BODY_HELD_MAX = 16 * 1024;

/** The request's headers (its own object, built for this call) asking for an uncompressed answer. */
function uncompressed(headers: Record<string, string>): Record<string, string> {
  headers['accept-encoding'] = 'identity';
  return headers;
}

function sentOnce(req: UpstreamRequest): { headers: Record<string, string>; body: Dispatcher.DispatchOptions['body'] } {
  let chunk: Buffer | undefined = typeof req.body === 'string' ? Buffer.from(req.body) : req.body;
  const headers = { ...req.headers, 'accept-encoding': 'identity', 'content-length': String(chunk.length) };
  return {
    headers,
    // undici takes any iterable as a body (its Request checks isIterable); its typings list streams only.
    body: {
      *[Symbol.iterator]() {
        const c = chunk!;
        chunk = undefined;
        yield c;
      },
    } as unknown as Dispatcher.DispatchOptions['body'],
  };
}

/** What an upstream call hears from undici: its dispatchers' own handler calls (undici 7 still runs
 *  every request through them). A handler of the newer controller interface (onRequestStart,
 *  onResponseStart…) is wrapped by undici in an adapter that also turns every response's header
 *  lines into an object; here they stay raw (name, value, name, value…) until something reads
 *  them (headersOf): on a stream that commits, nothing does (bench/README.md, "One request's
 *  instructions, by file"). onHeaders and onData return false to pause the socket; `resume`
 *  restarts it. */
export interface UpstreamHandler {
  onConnect(abort: (err?: Error) => void): void;
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers: string[] | null): void;
  onError(err: Error): void;
}

export type ResponseHeaders = Dispatcher.ResponseData['headers'];

/** Raw header lines as one object, as undici's own parse makes it: names lower-cased, a repeated
 *  name's values in an array, in the order they came. */
export function headersOf(raw: readonly (Buffer | string)[]): ResponseHeaders {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1').toLowerCase();
    const value = raw[i + 1]!.toString('latin1');
    const had = out[name];
    if (had === undefined) out[name] = value;
    else if (Array.isArray(had)) had.push(value);
    else out[name] = [had, value];
  }
  return out;
}

/** The coding of a response's body when it is not identity (RFC 9110 §8.4), read off the raw header
 *  lines without parsing them: a length comparison per header name. */
export function contentCoding(raw: readonly (Buffer | string)[]): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.length !== 16 || raw[i]!.toString('latin1').toLowerCase() !== 'content-encoding') continue;
    const coding = raw[i + 1]!.toString('latin1').trim();
    if (coding !== '' && coding.toLowerCase() !== 'identity') return coding;
  }
  return undefined;
}

/** undici's calls passed to the attempt unchanged; the capacity slot is given back when the
 *  response ends or fails. An object, not five closures: one is held by every open stream. A
 *  response with a body coding (asked for identity, a provider compressed anyway) is aborted: the
 *  attempt fails as an unreadable answer (transient: retried or fallen back from) whose message
 *  names the coding. */
class GatedHandler implements UpstreamHandler {
  private abort: ((err?: Error) => void) | undefined;
  /** The whole answer's bound, when it has one: undici's own timeouts bound the headers and each
   *  pause between chunks, not a body that trickles in a byte at a time forever. */
  private total: NodeJS.Timeout | undefined;
  /** The bound ran out before undici handed over its abort (a connection slower than it): the
   *  request is aborted as soon as it is. */
  private expired: Error | undefined;

  constructor(
    private readonly handler: UpstreamHandler, private readonly release: () => void, private readonly pools: Pools,
    totalMs?: number,
  ) {
    if (totalMs) {
      this.total = setTimeout(() => {
        const err = nonstreamTimeout(totalMs);
        if (this.abort) this.abort(err); else this.expired = err;
      }, totalMs);
    }
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    this.handler.onConnect(abort);
    if (this.expired) abort(this.expired);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    const coding = contentCoding(rawHeaders);
    if (coding !== undefined) {
      this.abort!(new Error(`the provider answered ${statusCode} with Content-Encoding: ${coding.slice(0, 40)}, asked for identity`));
      return false;
    }
    return this.handler.onHeaders(statusCode, rawHeaders, resume, statusText);
  }

  onData(chunk: Buffer): boolean { return this.handler.onData(chunk); }

  onComplete(trailers: string[] | null): void {
    clearTimeout(this.total);
    this.release();
    this.handler.onComplete(trailers);
  }

  onError(err: Error): void {
    clearTimeout(this.total);
    this.release();
    this.pools.noteTimeout(err);
    this.handler.onError(err);
  }
}

function nonstreamTimeout(ms: number): Error {
  return Object.assign(new Error(`the provider's answer did not complete within ${ms} ms`), { code: NONSTREAM_TIMEOUT });
}
