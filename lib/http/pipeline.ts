// The life of an inference request, as named steps over one request context, in the order they
// happen: guard (address rate, key, key rate) → check (body, validation) → plan (routes, the
// deadline, the flex mode, streamed or not upstream) → admit (the ledger, managed routes only) →
// race (the request machine) → respond → finish. Each step records what it decided on the
// context; finish() reads it on every path, refused or served, and releases what was held.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { CostExtras, IRUsage } from '../ir.ts';
import type { RouteName, Tier } from '../routes.ts';
import { DAY_MS } from '../ledger/rules.ts';
import { GatewayError } from '../errors.ts';
import { InFlight, type OpenRequest, type Services } from '../services.ts';
import { managedCredential } from '../config.ts';
import { costOf } from '../catalog/catalog.ts';
import { guard } from './auth.ts';
import { parseJsonObject, readBody, requestBodyLimits } from './body.ts';
import { asGatewayError, causeOf, sendError, type Headers } from './reply.ts';
import { checkRequest, stateNotFound, type CallerFormat, type CheckedRequest } from '../routing/validate.ts';
import { estimateInputTokens } from '../routing/input-estimate.ts';
import { planRequest, requestedMaxOutput, type Plan, type RoutePlan } from '../routing/plan.ts';
import { NO_RACE, startRequest, type FlexMode, type Outcome, type RunningRequest } from '../machine/request-machine.ts';
import type { Failure } from '../providers/types.ts';
import { AttemptFailed, runAttempt, type Attempt } from '../stream/attempt.ts';
import type { UpstreamTerms } from '../stream/pools.ts';
import { outputIn, respond, type IssuedIds, type Pricing, type StreamResult } from '../stream/respond.ts';
import type { FormatCodec } from '../formats/types.ts';
import type { ApiKeyRecord } from '../store/orgs.ts';
import { infoLine, member, type Logger } from '../log.ts';
import { EVENT_STREAM_HEAD } from '../headers.ts';

type Admitted = { holdId: string; spendRemainingMicroUsd: number; asOfMs: number };
type HoldEstimate = { inputTokens: number; maxOutput: number; micro: number };

/** One inference request, from arrival to its record. Steps fill it in as they decide; finish()
 *  reads whatever they got to. */
interface RequestContext extends OpenRequest {
  readonly id: string;
  readonly format: CallerFormat;
  readonly t0: number;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly svc: Services;
  key?: ApiKeyRecord;                 // guard
  bytes?: Buffer;                     // check: the body as the caller sent it
  checked?: CheckedRequest;           // check
  plan?: Plan;                        // plan: the route chain, each with its credential
  deadlineAt: number;                 // plan: start_within from arrival (arrival itself for "now")
  flex: FlexMode;                     // plan
  holdsSlot: boolean;                 // plan: a flex race slot of the org's is held
  streamedUpstream: boolean[];        // plan: per route of the chain, whether the upstream call streams
  estimate?: HoldEstimate;            // admit
  admitted?: Admitted;                // admit: the ledger's hold (managed routes)
  routes: RoutePlan[];                // admit: the routes that may run (own-key only when the ledger refused)
  run?: RunningRequest;               // race
  headTimer?: unknown;                // race: a long wait's early stream head, then its keep-alive comments
  headSent?: boolean;                 // … the head went out before commit
  inflight?: InFlight;
  drained?: boolean;                  // shutdown's drain ran out and stopped it (stopDrained)
  settledAt?: number;                 // the hold was settled before the answer's last bytes (settleBeforeEnd)
  onClose?: () => void;               // the caller's socket closed
  queuedOn?: Socket;                  // a pipelined request's connection, while its answer waits for it
  outcome?: Outcome;                  // race
  result?: StreamResult;              // respond
  status: number;
  errorCode: string | null;
  clientClosed: boolean;
  usage?: IRUsage;
  costMicroUsd: number;
  prev: OpenRequest | undefined;      // its neighbours in svc.open while open (the drain walks them)
  next: OpenRequest | undefined;
}

export async function handleInference(format: CallerFormat, req: IncomingMessage, res: ServerResponse, svc: Services): Promise<void> {
  const ctx: RequestContext = {
    id: randomUUID(), format, t0: svc.clock.now(), req, res, svc, deadlineAt: 0, flex: 'off', holdsSlot: false,
    streamedUpstream: [], routes: [], status: 200, errorCode: null, clientClosed: false, costMicroUsd: 0,
    prev: undefined, next: undefined,
  };
  // Heard from arrival: a caller that leaves while its key, body, plan or hold is awaited must not
  // have its request started (and paid for) once those are done.
  ctx.onClose = () => { if (!res.writableFinished) { ctx.clientClosed = true; ctx.run?.stop(); } };
  res.on('close', ctx.onClose);
  // Pipelined behind another answer on its connection, the response has no socket yet and node
  // tells it nothing when the caller goes: its request would run (a hold and an upstream stream
  // paused behind the first answer) until some timeout. The connection itself is listened to.
  if (!res.socket) queueOn(ctx.queuedOn = req.socket, ctx.onClose);
  svc.open.begin(ctx);
  try {
    if (svc.shuttingDown) throw new GatewayError('shutting_down');
    ctx.key = await guard(req, svc);
    await check(ctx);
    await makePlan(ctx);
    if (ctx.checked!.pinnedBy) await checkStateOwner(ctx);
    await admit(ctx);
    await race(ctx);
    await respondStep(ctx);
  } catch (err) {
    refuse(ctx, err);
  } finally {
    try { await finish(ctx); } finally { svc.open.end(ctx); }
  }
}

/** The requests queued behind another answer on a connection, told when it closes: one listener
 *  per connection however many are pipelined on it (one each passed node's listener warning at
 *  eleven, and removing each was a walk of them all). */
const queued = new WeakMap<Socket, Set<() => void>>();
function queueOn(socket: Socket, onClose: () => void): void {
  let waiting = queued.get(socket);
  if (!waiting) {
    const set = waiting = new Set();
    queued.set(socket, set);
    socket.once('close', () => { queued.delete(socket); for (const close of set) close(); });
  }
  waiting.add(onClose);
}

/** Read, parse and validate the body. */
async function check(ctx: RequestContext): Promise<void> {
  const { req, svc, format } = ctx;
  // Past the drain's time nothing waits for a body (one being read then is ended: lib/app.ts).
  if (svc.drainOver) throw new GatewayError('shutting_down');
  const bytes = ctx.bytes = await readBody(req, requestBodyLimits(svc));
  const raw = parseJsonObject(bytes);
  ctx.checked = checkRequest(format, raw, svc.catalog, ctx.key!.defaultStartWithin, req.headers, ctx.key!.defaultProvider);
}

/** The route chain with its credentials and upstream bodies (a body that cannot be translated is
 *  the caller's 400, before anything is sent), the deadline, the flex mode, and per route whether
 *  the upstream call streams. */
async function makePlan(ctx: RequestContext): Promise<void> {
  const { svc } = ctx;
  const checked = ctx.checked!;
  const orgId = ctx.key!.orgId;
  const ownKeys = await Promise.all(checked.routes.map((r) => svc.orgs.providerKey(orgId, r)));
  const plan = ctx.plan = planRequest(checked, {
    adapters: svc.adapters,
    codecs: svc.codecs,
    ownKey: (r) => ownKeys[checked.routes.indexOf(r)],
    managedKey: (r) => managedCredential(svc.config, r),
  });
  for (const rp of plan.routes) plan.upstreamBody(rp);
  ctx.routes = plan.routes;
  ctx.deadlineAt = ctx.t0 + (checked.startWithin.kind === 'duration' ? checked.startWithin.ms : 0);
  // A "now" request whose caller wants one body may call upstream non-streamed: there is no race,
  // so nothing needs to observe the first event (translated bodies are decoded whole and
  // re-encoded in the caller's format). A route with its own framing always streams.
  const wantsOneBody = checked.startWithin.kind === 'now' && !checked.stream;
  ctx.streamedUpstream = plan.routes.map((rp) => !(wantsOneBody && !svc.adapters[rp.route].framer));
  // The race slots limit own-key races (managed races are bounded by the ledger's concurrency).
  if (checked.startWithin.kind === 'duration') {
    ctx.flex = plan.routes[0]!.mode !== 'byok' ? 'race' : (ctx.holdsSlot = await svc.flexSlots.tryAcquire(orgId)) ? 'race' : 'slots_full';
  }
}

/** Conversation state named on a managed route: the service's one provider account holds every
 *  managed org's stored responses and interactions, so the id must have been issued to this org
 *  (lib/store/state-owners.ts); any other is answered as the provider answers an id it never
 *  issued, so another org's ids cannot be probed. An org's own key is its own account: no check. */
async function checkStateOwner(ctx: RequestContext): Promise<void> {
  const checked = ctx.checked!;
  const route = ctx.plan!.routes[0]!;
  if (route.mode !== 'managed') return;
  const orgId = ctx.key!.orgId;
  let owner: string | undefined;
  try {
    owner = checked.pinnedId ? await ctx.svc.store.stateOwners.ownerOf(checked.pinnedId, route.route) : undefined;
  } catch (err) {
    ctx.svc.log.error({ req: ctx.id, org: orgId, err }, 'state owners unreadable');
    throw new GatewayError('store_unavailable', 'The conversation state record cannot be read right now; retry shortly.');
  }
  if (owner !== orgId) throw stateNotFound(checked.pinnedBy!, checked.pinnedId ?? '');
}

/** Managed routes need the ledger's admission: one atomic step, whose hold is the input size
 *  (≈ 4 bytes a token, inline images and PDFs at their own figure: routing/input-estimate.ts) plus
 *  the output cap at the standard price; the shared pool is that of the
 *  first managed route. When it refuses but the chain starts on the org's own key, the request
 *  runs on its own-key routes alone (a managed pause never stops own keys). */
async function admit(ctx: RequestContext): Promise<void> {
  const { svc } = ctx;
  const plan = ctx.plan!;
  const checked = plan.checked;
  const inputTokens = estimateInputTokens(ctx.format, ctx.bytes!, checked.body);
  const maxOutput = requestedMaxOutput(checked) ?? uncappedOutput(ctx, svc.config.hold.default_max_output_tokens);
  const micro = costOf(svc.catalog.priceOf(checked.model, 'standard', ctx.t0), {
    inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: maxOutput, reasoningTokens: 0,
  });
  ctx.estimate = { inputTokens, maxOutput, micro };
  if (!plan.anyManaged) return;
  try {
    ctx.admitted = await admitToLedger(svc, ctx.id, ctx.key!.orgId, plan.routes.find((r) => r.mode === 'managed')!.route, micro);
  } catch (err) {
    if (!(err instanceof GatewayError) || plan.routes[0]!.mode !== 'byok') throw err;
    ctx.routes = plan.routes.filter((r) => r.mode === 'byok');
  }
}

/** A request that names no output cap: the most any route of its chain may generate, the default
 *  cap plus what a wire adds on top of it (an Anthropic thinking budget, which a translated
 *  reasoning effort turns on). */
function uncappedOutput(ctx: RequestContext, cap: number): number {
  const plan = ctx.plan!;
  let most = cap;
  for (const rp of plan.routes) {
    const more = ctx.svc.codecs[rp.wire].uncappedOutput;
    if (more) most = Math.max(most, more(plan.upstreamBody(rp), cap));
  }
  return most;
}

/** Runs the request machine over the chain until a tier commits or nothing is left. A caller
 *  that goes away stops it (and with it every upstream call); a draining process can abort it. */
async function race(ctx: RequestContext): Promise<void> {
  const { svc } = ctx;
  if (ctx.clientClosed) throw new GatewayError('client_closed_request');
  // The drain ran out while this request read its body or awaited its key, plan or admission:
  // nothing is sent upstream (its hold, if any, is released by finish()).
  if (svc.drainOver) throw new GatewayError('shutting_down');
  const plan = ctx.plan!;
  const checked = plan.checked;
  const run = ctx.run = startRequest({
    routes: ctx.routes.map((r) => r.route),
    flex: ctx.flex,
    deadlineAt: ctx.deadlineAt,
    // Only a race asks when to hedge: a request without one makes no advisor.
    hedge: ctx.flex === 'race' ? svc.scheduler.advisor(plan.routes[0]!.route, checked.model.id, svc.clock.now(), ctx.deadlineAt) : NO_RACE,
    retry: checked.retry,
    now: () => svc.clock.now(),
    random: svc.random,
    launch: (route, tier) => launchAttempt(ctx, route, tier),
  }, svc.timerClock);
  ctx.inflight = new InFlight(() => stopDrained(ctx), ctx.admitted?.holdId);
  svc.inflight.add(ctx.inflight);
  if (checked.stream && svc.config.timeouts.stream_head_ms && ctx.deadlineAt - ctx.t0 > svc.config.timeouts.stream_head_ms) holdStreamOpen(ctx);
  const outcome = ctx.outcome = await run.outcome;
  // A request that left its first route was a fallback, whatever it ended with (the answer's
  // x-service-routing-reason says so): the machine names only a committed one so. One stopped
  // before anything served stays `abandoned`.
  if (outcome.routeIndex > 0 && outcome.reason !== 'abandoned') outcome.reason = 'fallback';
  stopHoldingOpen(ctx);
}

/** Shutdown's drain ran out with this request in flight (lib/app.ts close): it is stopped, and
 *  answered as the gateway's refusal, not as a provider's failure. A request still waiting for a
 *  tier gets 503 shutting_down with Retry-After: 1 (respondStep); a stream under way ends with its
 *  format's shutting_down error event (respond.ts stoppedBy). */
const SHUTTING_DOWN = (({ code, message }) => ({ code, message }))(new GatewayError('shutting_down'));
function stopDrained(ctx: RequestContext): void {
  ctx.drained = true;
  ctx.run!.stop();
}

/** How often a stream whose head went out before commit is sent a comment line while it waits. */
const KEEPALIVE_MS = 15_000;

/** A streamed request may wait up to its start_within (10 minutes) for a tier to start, with no
 *  response headers meanwhile; node's fetch (the OpenAI SDK's transport) gives up after 300 s.
 *  Past timeouts.stream_head_ms without a commit, the 200 and the event-stream head go out, then a
 *  comment line (which every SSE parser skips) every 15 s until commit. Such a stream has no
 *  routing headers (they are decided at commit: its include_cost usage frame carries them), and a
 *  request nothing served ends it with the format's error event instead of an error status. */
function holdStreamOpen(ctx: RequestContext): void {
  const { svc, res } = ctx;
  const tick = (): void => {
    ctx.headTimer = undefined;
    if (ctx.outcome || ctx.clientClosed || res.destroyed) return;
    if (!res.headersSent) {
      const h: Headers = { ...EVENT_STREAM_HEAD, 'x-request-id': ctx.id };
      if (ctx.format === 'messages') h['request-id'] = ctx.id;
      // The spend figure is known once the routes resolve (and the hold is on): the head carries it.
      addSpendHeaders(h, ctx, ctx.routes.every((r) => r.mode === 'byok') ? 'byok' : 'managed');
      res.writeHead(200, h);
      ctx.headSent = true;
      res.write(': waiting for the provider to start (start_within); the stream begins when it does\n\n');
    } else res.write(': waiting\n\n');
    ctx.headTimer = clock.setTimeout(tick, KEEPALIVE_MS);
  };
  const clock = svc.timerClock ?? globalThis;
  ctx.headTimer = clock.setTimeout(tick, ctx.t0 + svc.config.timeouts.stream_head_ms - svc.clock.now());
}

function stopHoldingOpen(ctx: RequestContext): void {
  if (ctx.headTimer === undefined) return;
  (ctx.svc.timerClock ?? globalThis).clearTimeout(ctx.headTimer as NodeJS.Timeout);
  ctx.headTimer = undefined;
}

/** An error for a caller whose stream head already went out (holdStreamOpen): the format's error
 *  event ends the stream. */
function endStreamWithError(ctx: RequestContext, err: GatewayError): void {
  if (!ctx.res.writableEnded) ctx.res.end(ctx.svc.codecs[ctx.format].errorFrame(err.code, err.message));
}

/** After the race: the caller's error when nothing committed, else the committed stream drained
 *  into the caller's format and priced. */
async function respondStep(ctx: RequestContext): Promise<void> {
  const { svc, res } = ctx;
  const plan = ctx.plan!;
  const checked = plan.checked;
  const outcome = ctx.outcome!;
  const winner = outcome.winner;
  if (ctx.clientClosed) return;
  if (!winner) {
    const last = ctx.routes[outcome.routeIndex]!;
    const err = ctx.drained ? new GatewayError('shutting_down') : failureError(outcome.failure, last.mode === 'managed');
    ctx.status = err.status;
    ctx.errorCode = err.code;
    if (ctx.headSent) endStreamWithError(ctx, err);
    else sendError(res, checked.format, err, answerHeaders(ctx, last, outcome, 'standard'));
    return;
  }
  const served = servedRoute(ctx)!;
  const wire = svc.codecs[winner.wire];
  // The delivered output is measured in the provider's bytes (the wire's bytesPerOutputToken is
  // about them) of the frames that carry output: respond() counts them as they go.
  const wireMeter = { bytes: 0 };
  if (ctx.admitted && served.mode === 'managed') ctx.inflight!.delivered = deliveredCost(svc, checked, winner.tier, ctx.t0, ctx.estimate!, wire, wireMeter);
  // The race ended at commit: its slot is free for the org's next race while this answer streams.
  if (ctx.holdsSlot) { ctx.holdsSlot = false; void svc.flexSlots.release(ctx.key!.orgId); }
  // Counted in the loop's check phase, after this turn has written the answer's first bytes.
  setImmediate(countCommit, ctx);
  const headers = (tier: Tier): Headers => answerHeaders(ctx, served, outcome, tier);
  // Nothing is sent upstream after commit: a long stream does not keep the prompt.
  const model = checked.body.model;
  const issued = issuedTo(ctx, served);
  // An answer translated from another API repeats the request's own fields where its format does
  // (the caller codec's echo: Responses' instructions, tools, metadata…): those outlive the release
  // below, the prompt does not.
  const echo = served.passthrough ? undefined : svc.codecs[checked.format].echo?.(checked.body);
  ctx.bytes = undefined;
  plan.releaseBodies();
  const result = ctx.result = await respond({
    res, committed: winner, caller: svc.codecs[checked.format], wire,
    passthrough: served.passthrough, stream: checked.stream, includeCost: checked.includeCost, includeUsage: checked.includeUsage,
    headers,
    ctx: { id: '', model, createdAt: Math.floor(ctx.t0 / 1000), tier: winner.tier, includeUsage: checked.includeUsage, echo },
    pricing: pricing(svc, plan, served, outcome, ctx.t0, ctx.estimate!),
    issued, wireMeter,
    stoppedBy: () => (ctx.drained ? SHUTTING_DOWN : undefined),
    ...(ctx.admitted ? { beforeEnd: (cost: number) => settleBeforeEnd(ctx, served.mode === 'managed' ? cost : 0) } : {}),
    callerIdleMs: svc.config.timeouts.caller_idle_ms, onCallerIdle: svc.metrics.callerIdle,
  });
  // One tier per request: the record, the summary and the metrics' reason say what served.
  outcome.reason = servedReason(outcome, result.tier);
  ctx.usage = result.usage ?? unpricedUsage(outputIn(wire, result.wireBytes ?? 0), ctx.estimate!, result.reported);
  ctx.costMicroUsd = result.costMicroUsd ?? costOf(svc.catalog.priceOf(checked.model, result.tier, ctx.t0), ctx.usage);
  if (!result.complete && !checked.stream && !res.headersSent) {
    const err = ctx.drained ? new GatewayError('shutting_down') : new GatewayError('provider_error', `The provider stream failed: ${result.error}`);
    ctx.status = err.status;
    // Charged though it failed (the provider bills what it generated): the error says how much,
    // as every non-streamed answer does.
    sendError(res, checked.format, err, { ...headers(result.tier), 'x-service-cost': ctx.costMicroUsd });
  }
}

/** Where the caller is handed the provider's own id of state kept on the service's account (a
 *  managed route holding its format's conversation state, same API in and out, stored): who it
 *  was handed to, recorded before the caller can name it. Nothing for any other answer. */
function issuedTo(ctx: RequestContext, served: RoutePlan): IssuedIds | undefined {
  const checked = ctx.plan!.checked;
  if (served.mode !== 'managed' || !served.passthrough || checked.body.store === false) return undefined;
  if (ctx.svc.codecs[checked.format].endpoint?.state?.route !== served.route) return undefined;
  const owners = ctx.svc.store.stateOwners;
  const orgId = ctx.key!.orgId;
  return { record: (id) => owners.record(id, orgId, served.route), written: () => owners.written() };
}

/** A step threw: the caller gets the error in its format (a refused oversize or timed-out body is
 *  not drained: the connection closes after the answer). */
function refuse(ctx: RequestContext, err: unknown): void {
  const { res, svc } = ctx;
  const ge = asGatewayError(err);
  if (ge.code === 'internal_error') svc.log.error({ req: ctx.id, endpoint: ctx.format, org: ctx.key?.orgId, err }, 'internal error');
  if (ge.code === 'internal_error' || ge.code === 'store_unavailable') svc.store.observe?.(causeOf(err));
  if (ctx.headSent) endStreamWithError(ctx, ge);
  else if (!res.headersSent && !res.destroyed) sendError(res, ctx.format, ge, { 'x-request-id': ctx.id });
  ctx.status = ge.status;
  ctx.errorCode = ge.code;
  if (ge.code === 'client_closed_request') ctx.clientClosed = true;
}

/** Every path ends here: the machine ended or stopped (which aborts what is still open), the
 *  race slot released, the hold settled for what a managed route served, the in-flight entry
 *  dropped, the metrics counted, one usage record (for an authenticated caller) and one summary
 *  line written. */
async function finish(ctx: RequestContext): Promise<void> {
  const { svc, res, outcome, result, key } = ctx;
  if (ctx.onClose) { res.off('close', ctx.onClose); if (ctx.queuedOn) queued.get(ctx.queuedOn)?.delete(ctx.onClose); }
  stopHoldingOpen(ctx);
  // Anything but a stream that ran to its end stops the machine, which aborts what is still open.
  if (ctx.run && !(result?.complete && !ctx.clientClosed)) ctx.run.stop();
  if (ctx.holdsSlot) void svc.flexSlots.release(key!.orgId);
  if (ctx.clientClosed) { ctx.status = 499; ctx.errorCode = 'client_closed_request'; }
  else if (!ctx.errorCode && result && !result.complete) ctx.errorCode = ctx.drained ? 'shutting_down' : 'provider_error';
  // The balance pays only for what a managed route served; an own-key route's cost is the org's own.
  const mode = servedRoute(ctx)?.mode;
  const cost = ctx.costMicroUsd;
  // One instant for the settlement and the record: both land on the same UTC day.
  const now = ctx.settledAt ?? svc.clock.now();
  if (ctx.admitted && ctx.settledAt === undefined) await settle(ctx, mode === 'managed' ? cost : 0, now);
  if (ctx.inflight) svc.inflight.delete(ctx.inflight);
  if (mode && cost) svc.metrics.spendBy(mode).inc(cost);
  // Every retry and fallback the machine made, whether or not a tier then committed: a provider
  // outage, when nothing commits, is when they count most.
  if (outcome?.retries) svc.metrics.retries.inc(outcome.retries);
  if (outcome?.fallbacks) svc.metrics.fallbacks.inc(outcome.fallbacks);
  const checked = ctx.checked;
  const tier = result?.tier ?? outcome?.winner?.tier;
  if (key) {
    svc.usage.push({
      id: ctx.id, orgId: key.orgId, keyId: key.id, startedAt: ctx.t0, endedAt: now, format: ctx.format,
      model: checked?.model ?? null, requestedRoute: ctx.plan?.routes[0]!.route, servedRoute: outcome?.winner?.route, tier,
      reason: outcome?.reason, retries: outcome?.retries, fallbacks: outcome?.fallbacks, status: ctx.status, errorCode: ctx.errorCode,
      usage: ctx.usage, usageEstimated: !!ctx.usage && (!result?.usage || result.estimated === true), costMicroUsd: cost, mode, committedAt: outcome?.winner?.committedAt,
      deadlineAt: checked?.startWithin.kind === 'duration' ? ctx.deadlineAt : undefined, clientClosed: ctx.clientClosed,
    });
  }
  // One summary line per request, of fixed shape and scalar fields only (undefined ones left out).
  const summary: Summary = {
    req: ctx.id, endpoint: ctx.format, org: key?.orgId, model: checked?.model.id, status: ctx.status,
    route: outcome?.winner?.route, tier, reason: outcome?.reason, retries: outcome?.retries, fallbacks: outcome?.fallbacks,
    cost_micro_usd: cost, ms: now - ctx.t0, code: ctx.errorCode ?? undefined, stream_error: result?.error,
  };
  recordAnswer(svc, summary, ctx.clientClosed ? 'client_closed_request' : outcome ? 'request' : 'refused');
}

/** An answer's count (gateway_requests_total, by endpoint and status) and its one summary line:
 *  every inference request's (finish), an answer written before the pipeline runs (refuseEarly),
 *  and count_tokens'. */
export function recordAnswer(svc: Services, summary: Summary, msg: 'request' | 'refused' | 'client_closed_request'): void {
  svc.metrics.requestsBy(summary.endpoint, summary.status).inc();
  infoLine(summaryLog(svc.log), summary, summaryMembers, msg);
}

/** An inference endpoint's refusal written before its handler runs (lib/http/server.ts: a 405, a
 *  declared body over the cap with Expect: 100-continue): its id, count and summary line, as a
 *  request the pipeline refuses. `format` is the error envelope's; `endpoint`, the metric's label. */
export function refuseEarly(
  svc: Services, res: ServerResponse, format: CallerFormat, endpoint: string, err: GatewayError, headers: Headers = {},
): void {
  const id = randomUUID();
  sendError(res, format, err, { ...headers, 'x-request-id': id });
  recordAnswer(svc, { req: id, endpoint, status: err.status, cost_micro_usd: 0, ms: 0, code: err.code }, 'refused');
}

/** The request summary line's fields: scalars, none of them secret. */
export interface Summary {
  req: string; endpoint: string; org?: string; model?: string; status: number; route?: string; tier?: string;
  reason?: string; retries?: number; fallbacks?: number; cost_micro_usd: number; ms: number; code?: string; stream_error?: string;
}

/** The summary's members in its fields' order, as pino would write them (lib/log.ts infoLine). */
const summaryMembers = (s: Summary): string =>
  member('req', s.req) + member('endpoint', s.endpoint) + member('org', s.org) + member('model', s.model)
  + member('status', s.status) + member('route', s.route) + member('tier', s.tier) + member('reason', s.reason)
  + member('retries', s.retries) + member('fallbacks', s.fallbacks) + member('cost_micro_usd', s.cost_micro_usd)
  + member('ms', s.ms) + member('code', s.code) + member('stream_error', s.stream_error);

/** The commit's metrics (time to commit, deadline, flex share, outcome), counted
 *  once the answer's first bytes are out: at one connection the histogram's update was 4 µs of the
 *  first byte's path (bench/README.md, "One connection: the warm-up"). */
function countCommit(ctx: RequestContext): void {
  const { svc } = ctx;
  const outcome = ctx.outcome!;
  const winner = outcome.winner!;
  const labels = { route: winner.route, model: ctx.plan!.checked.model.id, tier: winner.tier, reason: outcome.reason };
  // A "now" request (flex off) has no deadline to miss: its deadline is its arrival.
  svc.metrics.observeCommit(labels, winner.committedAt - ctx.t0, ctx.flex === 'race', ctx.flex !== 'off' && winner.committedAt > ctx.deadlineAt);
  svc.metrics.outcomesBy(outcome.reason, winner.route, winner.tier).inc();
}

/** The route that served, when one committed. */
function servedRoute(ctx: RequestContext): RoutePlan | undefined {
  const route = ctx.outcome?.winner?.route;
  return route === undefined ? undefined : ctx.plan!.routes.find((r) => r.route === route);
}

/** Nothing committed: the caller's error from the last failure (a gateway-side refusal such as a
 *  full route keeps its own code; a provider's 4xx is passed on; anything else is provider_error). */
function failureError(f: Failure | undefined, managed: boolean): GatewayError {
  if (f?.callerError) return f.callerError;
  if (f?.gatewayCode) return new GatewayError(f.gatewayCode, undefined, { retryAfterS: Math.ceil((f.retryAfterMs ?? 1_000) / 1000) });
  // On a managed route a refused credential (401, 403), payment (402) or billing cap is the
  // service's own account's: not the caller's fault, and its words describe that account (its key's
  // tail, its quota). The caller gets a provider failure with the status only, like any other.
  const serviceAccount = managed && f !== undefined && (f.billing || f.status === 401 || f.status === 402 || f.status === 403);
  if (f?.kind === 'fatal' && !serviceAccount) {
    const status = f.status >= 400 && f.status < 500 ? f.status : 400;
    return new GatewayError('provider_rejected', `The provider rejected the request: ${f.message}`, { status });
  }
  // A provider's own failure on the service's account (a managed route) describes that account (a
  // 429 names its organization and quota): the caller gets the status, not the provider's words.
  // Its Retry-After (a 429's, a 503's) is passed on: the caller's SDK waits as the provider asked.
  return new GatewayError('provider_error', f ? `The provider failed (${f.status})${managed ? '.' : `: ${f.message}`}` : undefined,
    { retryAfterS: f?.retryAfterMs === undefined ? undefined : Math.ceil(f.retryAfterMs / 1000) });
}

const summaryLoggers = new WeakMap<Logger, Logger>();
/** The request summary line carries scalars of a fixed shape, none of them secret: where it is
 *  written by pino itself (infoLine's fallback), its logger redacts top-level key fields only,
 *  without the wildcard paths that make the main logger walk every value of every line. */
function summaryLog(log: Logger): Logger {
  let s = summaryLoggers.get(log);
  if (!s) {
    s = log.child({}, { redact: { paths: ['authorization', 'key', 'credential', 'api_key'], censor: '[redacted]' } });
    summaryLoggers.set(log, s);
  }
  return s;
}

/** One upstream attempt of the race, on a route of the chain and a tier. */
function launchAttempt(ctx: RequestContext, route: RouteName, tier: Tier): Attempt {
  const { svc } = ctx;
  const plan = ctx.plan!;
  const checked = plan.checked;
  const i = plan.routes.findIndex((r) => r.route === route);
  const rp = plan.routes[i]!;
  const adapter = svc.adapters[route];
  const streamed = ctx.streamedUpstream[i]!;
  const attempt = runAttempt({
    route, tier, wire: rp.wire, adapter, streamed,
    request: () => adapter.build({
      wire: rp.wire, body: plan.upstreamBody(rp), model: rp.modelId, tier, stream: streamed, credential: rp.credential,
      translated: !rp.passthrough, raw: rp.passthrough ? ctx.bytes : undefined, betas: checked.betas,
    }),
    upstream: upstreamTerms(svc, ctx.key!.orgId, tier, streamed, ctx.deadlineAt - svc.clock.now()),
  }, svc.pools, () => svc.clock.now());
  // A 401 reaches a route that caches its auth (cloud_a's access token) before the machine
  // hears the failure (this handler is the promise's first), so a retry mints a fresh token.
  if (adapter.authRejected) {
    attempt.committed.catch((err: unknown) => {
      if (err instanceof AttemptFailed && err.failure.status === 401) adapter.authRejected?.(rp.credential);
    });
  }
  // Only a streamed attempt commits at its first event: that is the time the race estimates learn.
  return streamed ? svc.scheduler.track(route, checked.model.id, tier, svc.clock.now(), attempt) : attempt;
}

/** A flex attempt never waits for a connection (not getting one is a flex failure, so the hedge
 *  starts at once) and may take its deadline plus the first-byte limit to answer; a standard one
 *  waits up to capacity.wait_ms; a non-streamed call waits for its whole answer (README "Timeouts"). */
function upstreamTerms(svc: Services, org: string, tier: Tier, streamed: boolean, untilDeadlineMs: number): UpstreamTerms {
  const t = svc.config.timeouts;
  const waitMs = tier === 'flex' ? 0 : svc.config.capacity.wait_ms;
  // The non-streamed fast path is bounded whole, headers and body (a provider may send its headers
  // at once and the body slowly): one timer from dispatch to its end.
  const flex = tier === 'flex';
  if (!streamed) return { org, waitMs, firstByteMs: 0, totalMs: t.upstream_nonstream_ms, flex };
  const firstByteMs = flex && t.upstream_first_byte_ms ? Math.max(0, untilDeadlineMs) + t.upstream_first_byte_ms
    : t.upstream_first_byte_ms;
  return { org, waitMs, firstByteMs, flex };
}

/** One atomic ledger step; an unreadable ledger refuses managed traffic (limits_unavailable). */
async function admitToLedger(svc: Services, reqId: string, orgId: string, route: RouteName, holdMicroUsd: number): Promise<Admitted> {
  const now = svc.clock.now();
  let r;
  try {
    r = await svc.ledger.admit({ orgId, holdMicroUsd, route, nowMs: now });
  } catch (err) {
    svc.log.error({ req: reqId, org: orgId, err }, 'ledger unreadable at admission');
    throw new GatewayError('limits_unavailable');
  }
  if (!r.ok) {
    // A daily-ceiling pause lasts until the next UTC midnight: that is the wait to advertise.
    const retryAfterS = r.retryAfterS ?? (r.code === 'spend_velocity_exceeded' ? Math.ceil((DAY_MS - (now % DAY_MS)) / 1000) : undefined);
    throw new GatewayError(r.code, undefined, { retryAfterS });
  }
  return r;
}

/** A complete answer's hold is settled before its last bytes go out: settled after them, a client
 *  sending its next request as soon as it had read this one reached admission first (another
 *  process's, or the ledger's next group commit) and found this request still holding a
 *  concurrency slot and its whole hold against today's ceiling (429s, and a pause for the rest of
 *  the day at a fraction of the ceiling). At most SETTLE_WAIT_MS is waited: a ledger that does not
 *  answer (its settlements are retried) must not hold the answer's end. */
const SETTLE_WAIT_MS = 1_000;
async function settleBeforeEnd(ctx: RequestContext, cost: number): Promise<void> {
  const now = ctx.settledAt = ctx.svc.clock.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => { timer = setTimeout(resolve, SETTLE_WAIT_MS); });
  await Promise.race([settle(ctx, cost, now), late]).finally(() => clearTimeout(timer));
}

async function settle(ctx: RequestContext, cost: number, nowMs: number): Promise<void> {
  const { svc } = ctx;
  const holdId = ctx.admitted!.holdId;
  try {
    await svc.ledger.settle(holdId, cost, nowMs);
  } catch (err) {
    // The hold stays and its lease expiry releases it; the cost is logged for reconciliation.
    svc.log.error({ req: ctx.id, org: ctx.key?.orgId, err, hold: holdId, cost_micro_usd: cost }, 'settlement failed');
  }
}

/** What the output that reached the caller so far costs, for the lease renewal (a crash is then
 *  charged this by whichever process releases the hold): the same estimate as a committed request
 *  that ended without the provider's usage, from the provider's bytes behind what went out that
 *  carry output (`wireMeter`, counted by respond()). */
function deliveredCost(
  svc: Services, checked: CheckedRequest, tier: Tier, t0: number, est: HoldEstimate, wire: FormatCodec, wireMeter: { bytes: number },
): () => number {
  const price = svc.catalog.priceOf(checked.model, tier, t0);
  return () => costOf(price, unpricedUsage(outputIn(wire, wireMeter.bytes), est));
}

/** A committed request that ended without the provider's final usage (client gone, upstream
 *  broke, or an answer that completed without it: Pricing.unreported): the provider bills the
 *  prompt once generation started, so charge the input it reported (else the estimate) plus the
 *  output the provider's bytes behind what reached the caller hold at most (`outputAtMost`: the
 *  wire's fewest bytes per token, FormatCodec.bytesPerOutputToken; a whole body's output bytes),
 *  never less than the output it reported, capped by the hold's output cap. Only the frames that
 *  carry output count (StreamResult.wireBytes): Responses' response.created and response.failed
 *  repeat the whole request, and a stream of those two alone is charged the input alone. */
function unpricedUsage(outputAtMost: number, est: { inputTokens: number; maxOutput: number }, reported?: IRUsage): IRUsage {
  const outputTokens = Math.min(est.maxOutput, Math.max(reported?.outputTokens ?? 0, outputAtMost));
  if (!reported?.inputTokens) return { inputTokens: est.inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens, reasoningTokens: 0 };
  return { ...reported, reasoningTokens: Math.min(reported.reasoningTokens, outputTokens), outputTokens };
}

/** Prices the committed answer at the prices in force when the request started (t0). */
function pricing(svc: Services, plan: Plan, served: RoutePlan, outcome: Outcome, t0: number, est: HoldEstimate): Pricing {
  const checked = plan.checked;
  return {
    unreported: (outputTokens, reported) => unpricedUsage(outputTokens, est, reported),
    price(usage: IRUsage, tier: Tier) {
      const costMicroUsd = costOf(svc.catalog.priceOf(checked.model, tier, t0), usage);
      const extras: CostExtras = {
        cost: { total_micro_usd: costMicroUsd, currency: 'USD' },
        routing: {
          provider: served.route, requested_provider: plan.routes[0]!.route, tier, reason: servedReason(outcome, tier),
          fallback_attempts: outcome.fallbacks, mode: served.mode,
        },
      };
      return { costMicroUsd, extras };
    },
  };
}

/** The headers of an answer after the race: its id, how it was routed, what the org may still spend. */
function answerHeaders(ctx: RequestContext, served: RoutePlan, o: Outcome, tier: Tier): Headers {
  const checked = ctx.plan!.checked;
  const h: Headers = {
    'x-request-id': ctx.id,
    'x-service-served-provider': served.route,
    'x-service-routing-reason': o.routeIndex > 0 ? 'fallback'
      : checked.pinnedBy ? 'pinned' : checked.explicitProvider ? 'requested' : 'native',
    'x-service-flex-applied': tier === 'flex' ? 'true' : 'false',
    'x-service-flex-reason': servedReason(o, tier),
  };
  // The Anthropic SDK reads its request id from `request-id` only.
  if (ctx.format === 'messages') h['request-id'] = ctx.id;
  if (checked.retry) h['x-service-retries'] = o.retries;
  addSpendHeaders(h, ctx, served.mode);
  return h;
}

/** The routing reason of an answer served at `tier`. A committed flex attempt whose provider
 *  served it at its standard tier (OpenAI's completed response names the tier actually used) was
 *  not flex: flex was unavailable and standard ran, as when the flex tier refuses. `tier` is the
 *  provider's named tier or, where its final event names none, the committed one (every decoder
 *  and tap leaves it undefined then), so only an explicit standard changes the reason. */
function servedReason(o: Outcome, tier: Tier): Outcome['reason'] {
  return o.winner?.tier === 'flex' && tier === 'standard' ? 'flex_unavailable' : o.reason;
}

/** What the org may still spend: an own key is unlimited; a managed route reports the balance as
 *  its hold was admitted. */
function addSpendHeaders(h: Headers, ctx: RequestContext, mode: RoutePlan['mode']): void {
  if (mode === 'byok') h['x-service-spend-remaining'] = 'unlimited';
  else if (ctx.admitted) {
    h['x-service-spend-remaining'] = ctx.admitted.spendRemainingMicroUsd;
    h['x-service-spend-as-of'] = ctx.admitted.asOfMs;
  }
}
