// One usage record per inference request (issue 10): what ran, what it cost, and what the same
// tokens would have cost on the standard tier, so "flex saved you N" is exact. Built once where
// the request ends (lib/http/pipeline.ts) and handed to the queue; never read on the hot path.
import type { IRUsage } from '../ir.ts';
import type { RouteName, Tier } from '../routes.ts';
import type { ModelEntry } from '../catalog/catalog.ts';
import { costOf, pricesAt } from '../catalog/catalog.ts';

export type KeyMode = 'byok' | 'managed';

export interface UsageRecord {
  id: string;                     // the request id (x-request-id)
  org_id: string;
  key_id: string;
  /** When the request ended (epoch ms): its cost was settled at this instant, so days group by it. */
  at_ms: number;
  started_at_ms: number;
  format: string;                 // caller format: responses, chat, messages, interactions
  model: string | null;           // null when the body never named a valid model
  requested_route: RouteName | null;
  served_route: RouteName | null; // null when nothing served
  tier: Tier | null;
  reason: string | null;          // routing reason (x-service-flex-reason)
  retries: number;
  fallbacks: number;
  status: number;
  error_code: string | null;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  /** True when the provider reported no usage and the tokens are the gateway's estimate (the
   *  same estimate that was charged: see lib/http/pipeline.ts). */
  usage_estimated: boolean;
  cost_micro_usd: number;
  /** The same tokens at the standard-tier price: equals cost_micro_usd unless flex served. */
  standard_cost_micro_usd: number;
  key_mode: KeyMode | null;       // null when nothing served
  time_to_commit_ms: number | null;
  duration_ms: number;
  client_closed: boolean;
  /** Whether the committed tier started within start_within; null without a duration. */
  deadline_met: boolean | null;
}

/** Standard-tier cost of the tokens that ran, at the prices in force when the request started:
 *  cost itself when standard served. */
export function standardEquivalent(model: ModelEntry, tier: Tier | null, usage: IRUsage | undefined, cost: number, startedAt: number): number {
  if (tier !== 'flex' || !usage) return cost;
  return costOf(pricesAt(model, startedAt).standard, usage);
}

/** What the pipeline knows when a request ends: a plain object handed to the queue as is (one
 *  allocation on the hot path); recordOf() flattens it into a record when the queue flushes. */
export interface RequestEnd {
  id: string;
  orgId: string;
  keyId: string;
  startedAt: number;
  endedAt: number;
  format: string;
  /** The catalog entry, when the request got that far; else the model string the body named. */
  model: ModelEntry | string | null;
  requestedRoute?: RouteName;
  servedRoute?: RouteName;
  tier?: Tier;
  reason?: string;
  retries?: number;
  fallbacks?: number;
  status: number;
  errorCode: string | null;
  usage?: IRUsage;
  usageEstimated?: boolean;
  costMicroUsd: number;
  mode?: KeyMode;
  committedAt?: number;
  /** Set for a duration start_within only. */
  deadlineAt?: number;
  clientClosed: boolean;
}

export function recordOf(end: RequestEnd): UsageRecord {
  const usage = end.usage;
  const tier = end.tier ?? null;
  const model = end.model;
  return {
    id: end.id, org_id: end.orgId, key_id: end.keyId, at_ms: end.endedAt, started_at_ms: end.startedAt,
    format: end.format, model: typeof model === 'object' && model ? model.id : model,
    requested_route: end.requestedRoute ?? null, served_route: end.servedRoute ?? null,
    tier, reason: end.reason ?? null, retries: end.retries ?? 0, fallbacks: end.fallbacks ?? 0,
    status: end.status, error_code: end.errorCode,
    input_tokens: usage?.inputTokens ?? 0, cached_input_tokens: usage?.cachedInputTokens ?? 0,
    cache_write_tokens: usage?.cacheWriteTokens ?? 0, output_tokens: usage?.outputTokens ?? 0,
    reasoning_tokens: usage?.reasoningTokens ?? 0, usage_estimated: end.usageEstimated ?? false,
    cost_micro_usd: end.costMicroUsd,
    standard_cost_micro_usd: typeof model === 'object' && model
      ? standardEquivalent(model, tier, usage, end.costMicroUsd, end.startedAt)
      : end.costMicroUsd,
    key_mode: end.servedRoute ? end.mode ?? null : null,
    time_to_commit_ms: end.committedAt === undefined ? null : end.committedAt - end.startedAt,
    duration_ms: end.endedAt - end.startedAt,
    client_closed: end.clientClosed,
    deadline_met: end.deadlineAt === undefined || !end.servedRoute
      ? null
      : end.committedAt !== undefined && end.committedAt <= end.deadlineAt,
  };
}
