// The life of an inference request, top to bottom, in the order it happens:
// limit IP → authenticate → limit key → read body → validate → plan → admit → race (machine)
// → respond → settle. Each step is a named function; every exit releases what the request held.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { CostExtras, IRUsage, RouteName, Tier } from '../ir.ts';
import { DAY_MS } from '../ledger/rules.ts';
import { GatewayError } from '../errors.ts';
import type { InFlight, Services } from '../services.ts';
import { managedCredential } from '../config.ts';
import { costOf } from '../catalog/catalog.ts';
import { authenticate } from './auth.ts';
import { parseJsonObject, readBody, requestBodyLimits } from './body.ts';
import { asGatewayError, sendError, type Headers } from './reply.ts';
import { checkRequest, type CallerFormat, type CheckedRequest } from '../routing/validate.ts';
import { planRequest, requestedMaxOutput, type Plan, type RoutePlan } from '../routing/plan.ts';
import { startRequest, type FlexMode, type Outcome } from '../machine/request-machine.ts';
import { runAttempt, type Attempt } from '../stream/attempt.ts';
import type { UpstreamTerms } from '../stream/pools.ts';
import { respond, type Pricing, type StreamResult } from '../stream/respond.ts';
import type { ApiKeyRecord } from '../store/orgs.ts';
import type { Logger } from '../log.ts';

type Admitted = { holdId: string; spendRemainingMicroUsd: number; asOfMs: number };

export async function handleInference(format: CallerFormat, req: IncomingMessage, res: ServerResponse, svc: Services): Promise<void> {
  const t0 = svc.clock.now();
  const reqId = randomUUID();
  res.setHeader('x-request-id', reqId);
  const log: LogBinding = { log: svc.log, bind: { req: reqId, endpoint: format } };
  let authed: ApiKeyRecord | undefined;
  try {
    if (svc.shuttingDown) throw new GatewayError('shutting_down');
    const ip = clientIp(req, svc);
    limitIp(svc, ip);
    const key = authed = await authenticateCounted(req, svc, ip);
    limitKey(svc, key);
    const bytes = await readBody(req, requestBodyLimits(svc));
    const raw = parseJsonObject(bytes);
    const checked = checkRequest(format, raw, svc.catalog, key.defaultStartWithin, req.headers['anthropic-beta']);
    const ownKeys = await Promise.all(checked.routes.map((r) => svc.orgs.providerKey(key.orgId, r)));
    const plan = planRequest(checked, {
      adapters: svc.adapters,
      codecs: svc.codecs,
      ownKey: (r) => ownKeys[checked.routes.indexOf(r)],
      managedKey: (r) => managedCredential(svc.config, r),
    });
    for (const rp of plan.routes) plan.upstreamBody(rp);   // translation errors are the caller's 400, before anything is sent
    log.bind.org = key.orgId;
    log.bind.model = checked.model.id;
    await runInference({ req, res, svc, key, plan, log, t0, bytes });
  } catch (err) {
    const ge = asGatewayError(err);
    if (ge.code === 'internal_error') log.log.error({ ...log.bind, err }, 'internal error');
    else log.log.info({ ...log.bind, code: ge.code, status: ge.status }, 'refused');
    // A refused oversize or timed-out body is not drained: the connection closes after the answer.
    if (!res.headersSent && !res.destroyed) sendError(res, format, ge, ge.code === 'request_too_large' || ge.code === 'request_timeout' ? { connection: 'close' } : {});
    svc.metrics.requestsBy(format, ge.status).inc();
    // Refused after authentication (validation, admission, limits): still the org's request.
    if (authed && !log.recorded) {
      svc.usage.push({ id: reqId, orgId: authed.orgId, keyId: authed.id, startedAt: t0, endedAt: svc.clock.now(), format,
        model: (log.bind.model as string | undefined) ?? null, status: ge.status, errorCode: ge.code, costMicroUsd: 0, clientClosed: ge.code === 'client_closed_request' });
    }
  }
}

export function clientIp(req: IncomingMessage, svc: Services): string {
  return svc.clientIp(req);
}

export function limitIp(svc: Services, ip: string): void {
  const r = svc.abuse.checkIp(ip);
  if (!r.ok) throw new GatewayError('rate_limit_exceeded', undefined, { retryAfterS: r.retryAfterS });
}

/** Authenticates; a failed attempt counts against the client IP before the key is known. */
export async function authenticateCounted(req: IncomingMessage, svc: Services, ip: string, missing: 'missing_api_key' | 'invalid_api_key' = 'missing_api_key'): Promise<ApiKeyRecord> {
  try {
    return await authenticate(req, svc.orgs, missing);
  } catch (err) {
    // A store that cannot be read is not a failed attempt of the caller's.
    if (!(err instanceof GatewayError) || err.code !== 'store_unavailable') svc.abuse.recordFailedAuth(ip);
    throw err;
  }
}

export function limitKey(svc: Services, key: ApiKeyRecord): void {
  const r = svc.abuse.checkKey(key.orgId, key.id);
  if (!r.ok) throw new GatewayError('rate_limit_exceeded', undefined, { retryAfterS: r.retryAfterS });
}

/** One request's log context: the fields every line of this request carries (no child logger per request). */
interface LogBinding { log: Logger; bind: Record<string, unknown>; recorded?: boolean }

const summaryLoggers = new WeakMap<Logger, Logger>();
/** The request summary line carries scalars of a fixed shape, none of them secret: its logger
 *  redacts top-level key fields only, without the wildcard paths that make the main logger walk
 *  every value of every line (the summary is written once per request). */
function summaryLog(log: Logger): Logger {
  let s = summaryLoggers.get(log);
  if (!s) {
    s = log.child({}, { redact: { paths: ['authorization', 'key', 'credential', 'api_key'], censor: '[redacted]' } });
    summaryLoggers.set(log, s);
  }
  return s;
}

interface RunArgs { req: IncomingMessage; res: ServerResponse; svc: Services; key: ApiKeyRecord; plan: Plan; log: LogBinding; t0: number; bytes: Buffer }

async function runInference({ res, svc, key, plan, log, t0, bytes }: RunArgs): Promise<void> {
  const c = plan.checked;
  const estimate = holdEstimate(svc, c, bytes.length);
  // Managed routes need the ledger's admission. When it refuses but the chain starts on the org's
  // own key, the request runs on its own-key routes alone (a managed pause never stops own keys).
  let routes = plan.routes;
  let admitted: Admitted | undefined;
  if (plan.anyManaged) {
    try {
      admitted = await admit(svc, key.orgId, plan.routes.find((r) => r.mode === 'managed')!.route, estimate);
    } catch (err) {
      if (!(err instanceof GatewayError) || plan.routes[0]!.mode !== 'byok') throw err;
      routes = plan.routes.filter((r) => r.mode === 'byok');
    }
  }
  const flex = await flexMode(svc, key.orgId, plan);
  const holdsSlot = flex === 'race' && plan.routes[0]!.mode === 'byok';
  const deadlineAt = t0 + (c.startWithin.kind === 'duration' ? c.startWithin.ms : 0);
  const run = startRequest({
    routes: routes.map((r) => r.route),
    flex,
    deadlineAt,
    hedge: svc.scheduler.advisor(plan.routes[0]!.route, c.model.id, svc.clock.now(), deadlineAt),
    retry: c.retry,
    now: () => svc.clock.now(),
    random: svc.random,
    launch: (route, tier) => launchAttempt(svc, plan, plan.routes.find((r) => r.route === route)!, tier, bytes, key.orgId, deadlineAt),
  }, svc.timerClock);

  let clientClosed = false;
  const onClose = (): void => { if (!res.writableFinished) { clientClosed = true; run.stop(); } };
  res.on('close', onClose);
  let finished!: () => void;
  const entry: InFlight = { abort: () => run.stop(), done: new Promise<void>((r) => { finished = r; }), holdId: admitted?.holdId };
  svc.inflight.add(entry);

  let outcome: Outcome | undefined;
  let result: StreamResult | undefined;
  let costMicroUsd = 0;
  let usage: IRUsage | undefined;
  let status = 200;
  let errorCode: string | null = null;
  try {
    outcome = await run.outcome;
    const winner = outcome.winner;
    if (clientClosed) { status = 499; return; }
    if (!winner) {
      const f = outcome.failure;
      const err = f?.gatewayCode ? new GatewayError(f.gatewayCode, undefined, { retryAfterS: Math.ceil((f.retryAfterMs ?? 1_000) / 1000) })
        : f?.kind === 'fatal'
        ? new GatewayError('provider_rejected', `The provider rejected the request: ${f.message}`, { status: f.status >= 400 && f.status < 500 ? f.status : 400 })
        : new GatewayError('provider_error', f ? `The provider failed (${f.status}): ${f.message}` : undefined);
      status = err.status;
      errorCode = err.code;
      const last = routes[outcome.routeIndex]!;
      sendError(res, c.format, err, { ...routingHeaders(c, last, outcome, 'standard'), ...spendHeaders(last, admitted) });
      return;
    }
    const served = plan.routes.find((r) => r.route === winner.route)!;
    if (admitted && served.mode === 'managed') entry.delivered = deliveredCost(svc, c, winner.tier, res, estimate);
    svc.metrics.observeCommit({ route: winner.route, model: c.model.id, tier: winner.tier, reason: outcome.reason }, winner.committedAt - t0, flex === 'race', winner.committedAt > deadlineAt);
    svc.metrics.outcomesBy(outcome.reason, winner.route, winner.tier).inc();
    if (outcome.retries) svc.metrics.retries.inc(outcome.retries);
    if (outcome.fallbacks) svc.metrics.fallbacks.inc(outcome.fallbacks);
    const headers = { ...routingHeaders(c, served, outcome, winner.tier), ...spendHeaders(served, admitted) };
    result = await respond({
      res, committed: winner, caller: svc.codecs[c.format], wire: svc.codecs[winner.wire],
      passthrough: served.passthrough, stream: c.stream, includeCost: c.includeCost, includeUsage: c.includeUsage,
      headers, ctx: { id: '', model: c.body.model, createdAt: Math.floor(t0 / 1000), tier: winner.tier, includeUsage: c.includeUsage },
      pricing: pricing(svc, plan, served, outcome),
      callerIdleMs: svc.config.timeouts.caller_idle_ms, onCallerIdle: svc.metrics.callerIdle,
    });
    if (!result.complete && !c.stream && !res.headersSent) {
      status = 502;
      sendError(res, c.format, new GatewayError('provider_error', `The provider stream failed: ${result.error}`), headers);
    }
    if (clientClosed) status = 499;
    usage = result.usage ?? unpricedUsage(result, estimate);
    costMicroUsd = result.costMicroUsd ?? costOf(svc.catalog.priceOf(c.model, result.tier), usage);
  } finally {
    res.off('close', onClose);
    // A stream that ran to its end ends the machine (stream.end → done); anything else stops it,
    // which aborts whatever upstream call is still open.
    if (result?.complete && !clientClosed) run.end(); else run.stop();
    if (holdsSlot) void svc.flexSlots.release(key.orgId);
    // The balance pays only for what a managed route served; an own-key route's cost is the org's own.
    const servedMode = outcome?.winner ? plan.routes.find((r) => r.route === outcome!.winner!.route)?.mode : undefined;
    if (admitted) await settle(svc, log, admitted.holdId, servedMode === 'managed' ? costMicroUsd : 0);
    svc.inflight.delete(entry);
    finished();
    if (servedMode && costMicroUsd) svc.metrics.spendBy(servedMode).inc(costMicroUsd);
    svc.metrics.requestsBy(c.format, status).inc();
    log.recorded = true;
    svc.usage.push({
      id: log.bind.req as string, orgId: key.orgId, keyId: key.id, startedAt: t0, endedAt: svc.clock.now(), format: c.format,
      model: c.model, requestedRoute: plan.routes[0]!.route, servedRoute: outcome?.winner?.route, tier: result?.tier ?? outcome?.winner?.tier,
      reason: outcome?.reason, retries: outcome?.retries, fallbacks: outcome?.fallbacks, status,
      errorCode: status === 499 ? 'client_closed_request' : errorCode ?? (result && !result.complete ? 'provider_error' : null),
      usage, usageEstimated: !!usage && !result?.usage, costMicroUsd, mode: servedMode, committedAt: outcome?.winner?.committedAt,
      deadlineAt: c.startWithin.kind === 'duration' ? deadlineAt : undefined, clientClosed,
    });
    // One summary line per request, of fixed shape and scalar fields only (pino skips undefined).
    summaryLog(svc.log).info({
      req: log.bind.req, endpoint: c.format, org: key.orgId, model: c.model.id, status,
      route: outcome?.winner?.route, tier: result?.tier ?? outcome?.winner?.tier, reason: outcome?.reason,
      retries: outcome?.retries, fallbacks: outcome?.fallbacks, cost_micro_usd: costMicroUsd, ms: svc.clock.now() - t0,
      code: status === 499 ? 'client_closed_request' : undefined, stream_error: result?.error,
    }, clientClosed ? 'client_closed_request' : 'request');
  }
}

function launchAttempt(svc: Services, plan: Plan, rp: RoutePlan, tier: Tier, bytes: Buffer, orgId: string, deadlineAt: number): Attempt {
  const c = plan.checked;
  const adapter = svc.adapters[rp.route];
  // A "now" request whose caller wants one body may call upstream non-streamed: there is no race,
  // so nothing needs to observe the first event (translated bodies are decoded whole and
  // re-encoded in the caller's format).
  const streamed = !(c.startWithin.kind === 'now' && !c.stream && !adapter.framer);
  const attempt = runAttempt({
    route: rp.route, tier, wire: rp.wire, adapter, streamed,
    request: () => adapter.build({ wire: rp.wire, body: plan.upstreamBody(rp), model: rp.modelId, tier, stream: streamed, credential: rp.credential, translated: !rp.passthrough, raw: rp.passthrough ? bytes : undefined, betas: c.betas }),
    upstream: upstreamTerms(svc, orgId, tier, streamed, deadlineAt - svc.clock.now()),
  }, svc.pools, () => svc.clock.now());
  // Only a streamed attempt commits at its first event: that is the time the race estimates learn.
  return streamed ? svc.scheduler.track(rp.route, c.model.id, tier, svc.clock.now(), attempt) : attempt;
}

/** A flex attempt never waits for a connection (not getting one is a flex failure, so the hedge
 *  starts at once) and may take its deadline plus the first-byte limit to answer; a standard one
 *  waits up to capacity.wait_ms; a non-streamed call waits for its whole answer (README "Timeouts"). */
function upstreamTerms(svc: Services, org: string, tier: Tier, streamed: boolean, untilDeadlineMs: number): UpstreamTerms {
  const t = svc.config.timeouts;
  const firstByteMs = !streamed ? t.upstream_nonstream_ms
    : tier === 'flex' && t.upstream_first_byte_ms ? Math.max(0, untilDeadlineMs) + t.upstream_first_byte_ms
    : t.upstream_first_byte_ms;
  return { org, waitMs: tier === 'flex' ? 0 : svc.config.capacity.wait_ms, firstByteMs };
}

async function flexMode(svc: Services, orgId: string, plan: Plan): Promise<FlexMode> {
  if (plan.checked.startWithin.kind !== 'duration') return 'off';
  if (plan.routes[0]!.mode !== 'byok') return 'race';
  return (await svc.flexSlots.tryAcquire(orgId)) ? 'race' : 'slots_full';
}

/** The hold: input size (≈ 4 bytes a token) plus the output cap, at the standard price. */
function holdEstimate(svc: Services, c: CheckedRequest, bodyBytes: number): { inputTokens: number; maxOutput: number; micro: number } {
  const inputTokens = Math.ceil(bodyBytes / 4);
  const maxOutput = requestedMaxOutput(c.body) ?? svc.config.hold.default_max_output_tokens;
  const micro = costOf(c.model.prices.standard, { inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: maxOutput, reasoningTokens: 0 });
  return { inputTokens, maxOutput, micro };
}

/** One atomic ledger step; the shared pool is that of the first managed route of the chain. */
async function admit(svc: Services, orgId: string, route: RouteName, estimate: { micro: number }): Promise<Admitted> {
  const now = svc.clock.now();
  let r;
  try {
    r = await svc.ledger.admit({ orgId, holdMicroUsd: estimate.micro, route, nowMs: now });
  } catch (err) {
    svc.log.error({ err, org: orgId }, 'ledger unreadable at admission');
    throw new GatewayError('limits_unavailable');
  }
  if (!r.ok) {
    // A daily-ceiling pause lasts until the next UTC midnight: that is the wait to advertise.
    const retryAfterS = r.retryAfterS ?? (r.code === 'spend_velocity_exceeded' ? Math.ceil((DAY_MS - (now % DAY_MS)) / 1000) : undefined);
    throw new GatewayError(r.code, undefined, { retryAfterS });
  }
  return r;
}

async function settle(svc: Services, log: LogBinding, holdId: string, cost: number): Promise<void> {
  try {
    await svc.ledger.settle(holdId, cost, svc.clock.now());
  } catch (err) {
    // The hold stays and its lease expiry releases it; the cost is logged for reconciliation.
    log.log.error({ ...log.bind, err, hold: holdId, cost_micro_usd: cost }, 'settlement failed');
  }
}

/** A committed request that ended without the provider's usage (client gone, upstream broke): the
 *  provider bills the prompt once generation started, so charge the estimated input plus an output
 *  estimate from the bytes that reached the caller (≈16 bytes of event framing per token), capped
 *  by the hold's output cap. */
/** What the output that reached the caller so far costs, for the lease renewal (a crash is then
 *  charged this by whichever process releases the hold): the same estimate as a committed request
 *  that ended without the provider's usage, from the bytes this response has written to its
 *  socket (headers included, a few tokens' worth). */
function deliveredCost(svc: Services, c: CheckedRequest, tier: Tier, res: ServerResponse, est: { inputTokens: number; maxOutput: number }): () => number {
  const socket = res.socket;
  const base = socket?.bytesWritten ?? 0;
  const price = svc.catalog.priceOf(c.model, tier);
  return () => costOf(price, unpricedUsage({ bytesOut: (socket?.bytesWritten ?? base) - base } as StreamResult, est));
}

function unpricedUsage(r: StreamResult, est: { inputTokens: number; maxOutput: number }): IRUsage {
  const outputTokens = Math.min(est.maxOutput, Math.ceil(r.bytesOut / 16));
  return { inputTokens: est.inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens, reasoningTokens: 0 };
}

function pricing(svc: Services, plan: Plan, served: RoutePlan, outcome: Outcome): Pricing {
  const c = plan.checked;
  return {
    price(usage: IRUsage, tier: Tier) {
      const costMicroUsd = costOf(svc.catalog.priceOf(c.model, tier), usage);
      const extras: CostExtras = {
        cost: { total_micro_usd: costMicroUsd, currency: 'USD' },
        routing: {
          provider: served.route, requested_provider: plan.routes[0]!.route, tier, reason: outcome.reason,
          fallback_attempts: outcome.fallbacks, mode: served.mode,
        },
      };
      return { costMicroUsd, extras };
    },
  };
}

function routingHeaders(c: CheckedRequest, served: RoutePlan, o: Outcome, tier: Tier): Headers {
  const h: Headers = {
    'x-service-served-provider': served.route,
    'x-service-routing-reason': o.routeIndex > 0 ? 'fallback' : c.pinnedBy ? 'pinned' : c.explicitProvider ? 'requested' : 'native',
    'x-service-flex-applied': tier === 'flex' ? 'true' : 'false',
    'x-service-flex-reason': o.reason,
  };
  if (c.retry) h['x-service-retries'] = o.retries;
  return h;
}

function spendHeaders(served: RoutePlan, admitted: Admitted | undefined): Headers {
  if (served.mode === 'byok') return { 'x-service-spend-remaining': 'unlimited' };
  if (!admitted) return {};
  return { 'x-service-spend-remaining': admitted.spendRemainingMicroUsd, 'x-service-spend-as-of': admitted.asOfMs };
}
