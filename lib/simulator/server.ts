// The provider simulator: one node:http server speaking the wire formats of the five provider
// routes, deterministic from a seed, with a flex queue and injectable faults (see directive.ts).
// handle() reads as a request's life: match → read → authenticate → decode → directive →
// injected failure → tier start (flex queue / standard delay) → replay | answer (body or stream).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Rng, hash32 } from './rng.ts';
import { parseDirective, type Directive } from './directive.ts';
import { composeAnswer, nextUid } from './answer.ts';
import { errorReply, errorNameFor, type ErrorFamily, type ErrorName, type ErrorReply } from './errors.ts';
import { FailureSchedule } from './faults.ts';
import { TokenIssuer } from './oauth-token.ts';
import { loadReplay } from './replay.ts';
import { sleep } from './sleep.ts';
import { writeStream, type StreamMeter } from './stream-writer.ts';
import { isRecord, type Decoded } from './prompt.ts';
import type { RequestInfo, RouteAdapter, RouteContext } from './routes/route.ts';
import { openaiResponses } from './routes/openai-responses.ts';
import { openaiChat } from './routes/openai-chat.ts';
import { geminiInteractions } from './routes/gemini-interactions.ts';
import { anthropicMessages } from './routes/anthropic-messages.ts';
import { vertexGemini } from './routes/vertex-gemini.ts';
import { bedrockClaude } from './routes/bedrock-claude.ts';
import { COUNT_TOKENS_PATH, countTokens } from './routes/anthropic-count-tokens.ts';

export interface SimulatorOptions {
  port?: number;            // 0 = ephemeral (default 0)
  host?: string;            // default 127.0.0.1
  seed?: number;            // default 1
  /** Flex queue (a "world"): start delay drawn (seeded) uniformly in [min, max] or lognormal with
   *  a median and σ; refusal probability; and congestion over time — periods, in ms since the
   *  simulator started on its clock, whose delays are scaled or replaced and refusal rate changed. */
  flex?: { startMs?: StartDistribution; refuseRate?: number; congestion?: CongestionPeriod[] };
  /** The clock congestion periods are read on (default Date.now; tests pass the gateway's). */
  now?: () => number;
  /** Standard tier: time to first event. */
  standard?: { startMs?: number };
  /** Output token rate (0 or Infinity = no pacing). */
  tokensPerS?: number;
  /** Default output length in tokens. */
  outputTokens?: number;
  /** The folder the `replay` directive reads from (relative paths resolve against
   *  process.cwd()); a replayed path must stay inside it. Default: none, and `replay` is refused. */
  fixturesDir?: string;
  /** SigV4 secrets by access key id for cloud_b; when given, signatures are verified and
   *  unknown AKIDs refused. Without it any well-formed signature is accepted. */
  awsSecrets?: Record<string, string>;
}

export type StartDistribution = { min: number; max: number } | { median: number; sigma: number };

export interface CongestionPeriod {
  fromMs: number;
  toMs: number;
  /** Replaces the start distribution during the period … */
  startMs?: StartDistribution;
  /** … or multiplies the drawn delay (default 1). */
  scale?: number;
  refuseRate?: number;
}

export interface SimulatorStats {
  /** Requests to the five provider routes (the /token endpoint counts only in byRoute.token). */
  requests: number;
  /** Requests whose client connection closed before the response finished. */
  aborted: number;
  /** Provider requests open now, and the most ever open at once (concurrency seen upstream). */
  open: number;
  peakOpen: number;
  byRoute: Record<string, number>;
  /** Streamed bytes and socket back-pressure (see StreamMeter). */
  streams: StreamMeter;
}

export interface Simulator { url: string; port: number; close(): Promise<void>; stats: SimulatorStats }

const ROUTES: readonly RouteAdapter[] = [
  openaiResponses, openaiChat, geminiInteractions, anthropicMessages, vertexGemini, bedrockClaude,
];
const MAX_BODY_BYTES = 32 * 1024 * 1024;

interface Config {
  seed: number;
  flexStart: StartDistribution;
  refuseRate: number;
  congestion: CongestionPeriod[];
  now: () => number;
  startedAt: number;
  standardStartMs: number;
  tokensPerS: number;
  outputTokens: number;
  fixturesDir: string | undefined;
}

interface SimState {
  config: Config;
  stats: SimulatorStats;
  /** Flex queue draws (start delay, refusal), in request order. */
  flexRng: Rng;
  uidRng: Rng;
  failures: FailureSchedule;
  tokens: TokenIssuer;
  routeContext: RouteContext;
  live: Set<AbortController>;
  /** Ids of the answers a stateful API stored (Responses, Interactions), oldest first. */
  stored: Set<string>;
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const seed = opts.seed ?? 1;
  const config: Config = {
    seed,
    flexStart: normalizeStart(opts.flex?.startMs),
    refuseRate: opts.flex?.refuseRate ?? 0,
    congestion: opts.flex?.congestion ?? [],
    now: opts.now ?? Date.now,
    startedAt: (opts.now ?? Date.now)(),
    standardStartMs: opts.standard?.startMs ?? 0,
    tokensPerS: opts.tokensPerS ?? 0,
    outputTokens: opts.outputTokens ?? 16,
    fixturesDir: opts.fixturesDir === undefined ? undefined : resolve(opts.fixturesDir),
  };
  const tokens = new TokenIssuer(new Rng(hash32('oauth', seed)));
  const sim: SimState = {
    config,
    stats: {
      requests: 0, aborted: 0, open: 0, peakOpen: 0, byRoute: {}, streams: { bytesWritten: 0, drainWaits: 0, paused: 0, finished: 0 },
    },
    flexRng: new Rng(hash32('flex', seed)),
    uidRng: new Rng(hash32('uid', seed)),
    failures: new FailureSchedule(),
    tokens,
    routeContext: { isIssuedToken: (t) => tokens.isIssued(t), awsSecrets: opts.awsSecrets },
    live: new Set(),
    stored: new Set(),
  };

  const server = createServer((req, res) => {
    handle(req, res, sim).catch((err: unknown) => {
      // Never crash on bad input: a bug becomes a 500 (or a dropped stream once committed).
      if (!res.headersSent) send(res, errorReply('openai', 'server_error', { message: String(err) }));
      else { markSelfClosed(res); res.destroy(); }
    });
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port ?? 0, host, () => { server.off('error', fail); ok(); });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    stats: sim.stats,
    close: () => new Promise<void>((ok) => {
      for (const ac of sim.live) ac.abort();
      server.close(() => ok());
      server.closeAllConnections();
    }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, sim: SimState): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sim');
  if (url.pathname === '/token') return handleToken(req, res, sim);
  if (url.pathname === COUNT_TOKENS_PATH) return handleCountTokens(req, res, sim);
  const found = findRoute(url.pathname);
  if (!found) return send(res, errorReply('openai', 'not_found', { message: `Unknown path: ${req.method} ${url.pathname}` }));
  const { route, params } = found;
  count(sim.stats, route.name);
  const signal = watchLifetime(res, sim);
  if (req.method !== 'POST') return send(res, errorReply(route.family, 'method_not_allowed'));

  const rawBody = await readBody(req);
  if (rawBody === 'too_large') return send(res, errorReply(route.family, 'too_large'));
  if (!rawBody) return; // client went away mid-body
  const info: RequestInfo = { method: 'POST', path: url.pathname, query: url.searchParams, headers: req.headers, params, rawBody };

  const rejected = await route.authenticate(info, sim.routeContext);
  if (rejected) return send(res, errorReply(route.family, rejected.name, { status: rejected.status, message: rejected.message }));

  const body = parseJson(rawBody);
  if (body === INVALID_JSON) return send(res, errorReply(route.family, 'bad_request', { message: 'Invalid JSON in request body.' }));
  const decoded = route.decode(body, info);
  if (!decoded.ok) return send(res, errorReply(route.family, 'bad_request', { status: decoded.status, message: decoded.message }));
  const ref = route.state && isRecord(body) ? route.state.referenced(body) : undefined;
  if (ref !== undefined && !sim.stored.has(ref)) return send(res, route.state!.notFound(ref));
  const parsed = parseDirective(decoded.value.prompt.lastUserText);
  if (!parsed.ok) return send(res, errorReply(route.family, 'bad_request', { message: parsed.message }));
  const directive = parsed.directive;

  const injected = sim.failures.next(directive);
  if (injected !== undefined) return send(res, injectedError(route.family, errorNameFor(injected), injected, directive));

  const start = planStart(route, decoded.value, directive, sim);
  if (!(await sleep(start.delayMs, signal))) return;
  if (start.refuse) {
    const refusal = route.flexRefusal!;
    return send(res, injectedError(route.family, refusal.name, refusal.status, directive, refusal.message));
  }

  if (directive?.replay) return replay(res, route, decoded.value, directive, sim, signal);
  return answer(res, route, decoded.value, directive, sim, signal);
}

/** When the tier starts and whether the flex queue refuses. Flex draws happen for every flex
 *  request (even when the directive overrides them) so the seeded sequence stays stable. */
function planStart(route: RouteAdapter, decoded: Decoded, directive: Directive | undefined, sim: SimState) {
  const { config } = sim;
  if (decoded.tier !== 'flex' || !route.flexRefusal) {
    return { delayMs: directive?.standard_start_ms ?? config.standardStartMs, refuse: false };
  }
  const since = config.now() - config.startedAt;
  const period = config.congestion.find((p) => since >= p.fromMs && since < p.toMs);
  const dist = period?.startMs ?? config.flexStart;
  const draw = sim.flexRng.next();
  const drawnRefuse = sim.flexRng.next() < (period?.refuseRate ?? config.refuseRate);
  const drawnDelay = (period?.scale ?? 1) * drawStart(dist, draw, sim.flexRng);
  return {
    delayMs: directive?.flex_start_ms ?? Math.round(drawnDelay),
    refuse: directive?.flex_refuse ?? drawnRefuse,
  };
}

function normalizeStart(distribution: { min?: number; max?: number; median?: number; sigma?: number } | undefined): StartDistribution {
  if (distribution && 'median' in distribution && distribution.median !== undefined) {
    return { median: distribution.median, sigma: distribution.sigma ?? 1 };
  }
  const min = (distribution as { min?: number } | undefined)?.min ?? 0;
  return { min, max: (distribution as { max?: number } | undefined)?.max ?? min };
}

/** A start delay from its distribution; `draw` is the request's first flex draw (uniform), a
 *  lognormal takes one more (Box–Muller), so uniform worlds keep their seeded sequence. */
function drawStart(distribution: StartDistribution, draw: number, rng: Rng): number {
  if ('min' in distribution) return distribution.min + draw * (distribution.max - distribution.min);
  const z = Math.sqrt(-2 * Math.log(1 - draw)) * Math.cos(2 * Math.PI * rng.next());
  return Math.min(600_000, distribution.median * Math.exp(distribution.sigma * z));
}

async function answer(
  res: ServerResponse, route: RouteAdapter, decoded: Decoded, directive: Directive | undefined, sim: SimState, signal: AbortSignal,
): Promise<void> {
  const composed = composeAnswer({
    prompt: decoded.prompt, directive, seed: sim.config.seed, uid: nextUid(sim.uidRng), defaultOutputTokens: sim.config.outputTokens,
  });
  const tokensPerS = directive?.tokens_per_s ?? sim.config.tokensPerS;
  const headers = route.headers?.(composed, decoded) ?? {};
  const storedId = route.state?.issued(composed, decoded.echo);
  if (storedId !== undefined) remember(sim.stored, storedId);
  if (!decoded.stream) {
    // A non-streamed answer arrives when generation would have finished.
    if (tokensPerS > 0 && Number.isFinite(tokensPerS) && !(await sleep((composed.usage.output / tokensPerS) * 1000, signal))) return;
    const body = JSON.stringify(route.encodeBody(composed, decoded));
    return send(res, { status: 200, headers: { ...headers, 'content-type': 'application/json' }, body });
  }
  const encoding = route.encodeStream(composed, decoded);
  res.writeHead(200, { ...headers, 'content-type': route.streamContentType, 'cache-control': 'no-cache' });
  await writeStream(res, encoding.frames, {
    tokensPerS,
    resetAfterTokens: directive?.reset_after_tokens,
    errorAfterTokens: directive?.error_after_tokens,
    errorFrames: () => encoding.error('The server had an error while processing your request.'),
    beforeReset: () => markSelfClosed(res),
  }, signal, sim.stats.streams);
}

async function replay(
  res: ServerResponse, route: RouteAdapter, d: Decoded, directive: Directive, sim: SimState, signal: AbortSignal,
): Promise<void> {
  const file = await loadReplay(sim.config.fixturesDir, directive.replay!);
  if (!file.ok) return send(res, errorReply(route.family, 'bad_request', { message: file.message }));
  const headers = route.headers?.(undefined, d) ?? {};
  if (file.kind === 'json') {
    return send(res, { status: 200, headers: { ...headers, 'content-type': 'application/json' }, body: file.body });
  }
  res.writeHead(200, { ...headers, 'content-type': route.streamContentType, 'cache-control': 'no-cache' });
  const frames = (function* () {
    for (const line of file.lines) yield route.replayFrame(line);
    yield* route.replayTail;
  })();
  await writeStream(res, frames, {
    tokensPerS: directive.tokens_per_s ?? sim.config.tokensPerS,
    resetAfterTokens: directive.reset_after_tokens,
    errorAfterTokens: undefined,
    errorFrames: () => [],
    beforeReset: () => markSelfClosed(res),
  }, signal, sim.stats.streams);
}

async function handleToken(req: IncomingMessage, res: ServerResponse, sim: SimState): Promise<void> {
  count(sim.stats, 'token', false);
  watchLifetime(res, sim);
  if (req.method !== 'POST') return sendJson(res, 405, { error: 'invalid_request', error_description: 'POST only.' });
  const raw = await readBody(req);
  if (raw === 'too_large') return sendJson(res, 413, { error: 'invalid_request', error_description: 'Body too large.' });
  if (!raw) return;
  const reply = sim.tokens.exchange(raw.toString('utf8'));
  return sendJson(res, reply.status, reply.body);
}

async function handleCountTokens(req: IncomingMessage, res: ServerResponse, sim: SimState): Promise<void> {
  count(sim.stats, 'vendor_c_count_tokens', false);
  watchLifetime(res, sim);
  if (req.method !== 'POST') return send(res, errorReply('anthropic', 'method_not_allowed'));
  const raw = await readBody(req);
  if (raw === 'too_large') return send(res, errorReply('anthropic', 'too_large'));
  if (!raw) return;
  const body = parseJson(raw);
  if (body === INVALID_JSON) return send(res, errorReply('anthropic', 'bad_request', { message: 'Invalid JSON in request body.' }));
  return send(res, countTokens(req.headers, body));
}

// ---------- small steps ----------

const MAX_STORED = 100_000;
function remember(stored: Set<string>, id: string): void {
  stored.add(id);
  if (stored.size > MAX_STORED) stored.delete(stored.values().next().value!);
}

function findRoute(path: string): { route: RouteAdapter; params: Record<string, string> } | undefined {
  for (const route of ROUTES) {
    const params = route.match(path);
    if (params) return { route, params };
  }
  return undefined;
}

function count(stats: SimulatorStats, name: string, isProviderRequest = true): void {
  if (isProviderRequest) stats.requests++;
  stats.byRoute[name] = (stats.byRoute[name] ?? 0) + 1;
}

const selfClosed = new WeakSet<ServerResponse>();
function markSelfClosed(res: ServerResponse): void { selfClosed.add(res); }

/** The request's lifetime: aborted when the connection closes; counted when that happens before
 *  the response finished (and not because the simulator reset it on purpose). */
function watchLifetime(res: ServerResponse, sim: SimState): AbortSignal {
  const ac = new AbortController();
  sim.live.add(ac);
  // Open from the request's arrival until its last byte is handed to the socket (res.end), not
  // until 'close', which a busy event loop may deliver after the client already read everything.
  sim.stats.peakOpen = Math.max(sim.stats.peakOpen, ++sim.stats.open);
  let open = true;
  const closed = (): void => { if (open) { open = false; sim.stats.open--; } };
  const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
  res.end = ((...a: unknown[]) => { closed(); return end(...a); }) as ServerResponse['end'];
  res.on('close', () => {
    closed();
    if (!res.writableFinished && !selfClosed.has(res)) sim.stats.aborted++;
    sim.live.delete(ac);
    ac.abort();
  });
  return ac.signal;
}

function readBody(req: IncomingMessage): Promise<Buffer | 'too_large' | undefined> {
  return new Promise((resolveBody) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolveBody(size > MAX_BODY_BYTES ? 'too_large' : Buffer.concat(chunks)));
    req.on('error', () => resolveBody(undefined));
    req.on('close', () => { if (!req.complete) resolveBody(undefined); });
  });
}

const INVALID_JSON = Symbol('invalid json');
function parseJson(raw: Buffer): unknown {
  try { return JSON.parse(raw.toString('utf8')); } catch { return INVALID_JSON; }
}

function injectedError(
  family: ErrorFamily, name: ErrorName, status: number, d: Directive | undefined, message?: string,
): ErrorReply {
  const retryable = status === 429 || status === 503 || status === 529;
  return errorReply(family, name, { status, message, retryAfterS: retryable ? d?.retry_after_s : undefined });
}

function send(res: ServerResponse, reply: ErrorReply | { status: number; headers: Record<string, string>; body: string | Buffer }): void {
  if (res.destroyed) return;
  const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
  res.writeHead(reply.status, { ...reply.headers, 'content-length': String(body.length) });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}
