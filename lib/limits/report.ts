// The limits report of GET /v1/limits (spec "Limits report"), built from the ledger's snapshot —
// the same figures admission reads — and serialized by one fast-json-stringify function compiled
// at start from schemas/limits-report.json.
import fastJson from 'fast-json-stringify';
import limitsReportSchema from '../../schemas/limits-report.json' with { type: 'json' };
import type { PauseReason, Snapshot } from '../ledger/types.ts';
import type { AbuseLimitsConfig } from './abuse.ts';

export const REQUEST_BODY_BYTES = 50_000_000;

type AbuseRateName = keyof AbuseLimitsConfig;

export interface LimitsReport {
  object: 'limits';
  as_of: number;
  own_keys: {
    unlimited: true;
    flex_race_slots: { limit: number; scope: 'organization'; on_exceed: 'degrade_to_standard' };
  };
  managed: ManagedLimits | null;
  abuse_limits: {
    counted_per_edge_location: true;
    request_body_bytes: number;
    client_ip: ClientIpSource;
    rates: Array<{
      name: AbuseRateName; scope: 'organization' | 'api_key' | 'client_ip'; window_seconds: 60; limit: number | null; on_exceed: 'refuse';
    }>;
  };
}

/** How the per-address limits (client_ip scope) tell callers apart: the connection's address, or,
 *  behind trusted proxies (trust_proxy), the X-Forwarded-For address the nearest of them names. */
export interface ClientIpSource { source: 'connection' | 'x_forwarded_for'; trusted_proxies: number }

export interface ManagedLimits {
  providers: string[];
  serving: 'ok' | 'paused';
  paused_reason: PauseReason | null;
  binding: Snapshot['binding'];
  spend_remaining_micro_usd: number;
  currency: 'USD';
  balance: { remaining_micro_usd: number; cash_micro_usd: number; credit_micro_usd: number; reserved_micro_usd: number };
  daily_spend: { limit_micro_usd: number; used_micro_usd: number; remaining_micro_usd: number; window: 'utc_day'; resets_at: number };
  concurrency: { limit: number; scope: 'organization'; on_exceed: 'refuse' };
  ramp_week: number | null;
  ramp_defaults: { concurrency: number; daily_spend_micro_usd: number } | null;
  override_in_force: { concurrency: boolean; daily_spend: boolean } | null;
  rates: Array<{ name: string; scope: 'pool'; window_seconds: 60; limit: number; used: number; on_exceed: 'refuse' }>;
}

export interface LimitsReportInput {
  nowMs: number;
  flexRaceSlots: number;
  /** Routes this organization is served on the service's keys: the managed routes it has no own
   *  key for (the planner prefers an own key). Empty → managed is null. */
  managedProviders: string[];
  /** The ledger's snapshot; null when no balance was read. */
  snapshot: Snapshot | null;
  abuse: AbuseLimitsConfig;
  /** Per-minute limits are counted per edge location, so by default no figure is published. */
  publishAbuseLimits: boolean;
  /** Entries of trust_proxy (0: X-Forwarded-For is ignored). */
  trustedProxies?: number;
}

const ABUSE_ROWS: Array<{ name: AbuseRateName; scope: 'organization' | 'api_key' | 'client_ip' }> = [
  { name: 'organization_requests', scope: 'organization' },
  { name: 'api_key_requests', scope: 'api_key' },
  { name: 'client_ip_requests', scope: 'client_ip' },
  { name: 'failed_authentications', scope: 'client_ip' },
];

export function buildLimitsReport(input: LimitsReportInput): LimitsReport {
  const snapshot = input.snapshot;
  return {
    object: 'limits',
    as_of: snapshot ? snapshot.asOfMs : input.nowMs,
    own_keys: {
      unlimited: true,
      flex_race_slots: { limit: input.flexRaceSlots, scope: 'organization', on_exceed: 'degrade_to_standard' },
    },
    managed: snapshot && input.managedProviders.length > 0 ? managedLimits(input.managedProviders, snapshot) : null,
    abuse_limits: {
      counted_per_edge_location: true,
      request_body_bytes: REQUEST_BODY_BYTES,
      client_ip: { source: input.trustedProxies ? 'x_forwarded_for' : 'connection', trusted_proxies: input.trustedProxies ?? 0 },
      rates: ABUSE_ROWS.map((row) => ({
        name: row.name, scope: row.scope, window_seconds: 60,
        limit: input.publishAbuseLimits ? input.abuse[row.name] : null,
        on_exceed: 'refuse',
      })),
    },
  };
}

/** For an exempt organization the ledger reports its ceilings as rules.ts UNBOUNDED
 *  (Number.MAX_SAFE_INTEGER): the schema's integer type is kept, the figure never binds, and
 *  binding = "exempt" with ramp_week / ramp_defaults / override_in_force null says why. */
function managedLimits(providers: string[], snapshot: Snapshot): ManagedLimits {
  const dailyRemaining = snapshot.dailyLimitMicroUsd - snapshot.dailyUsedMicroUsd;
  return {
    providers: [...providers],
    serving: snapshot.serving,
    paused_reason: snapshot.pausedReason,
    binding: snapshot.binding,
    spend_remaining_micro_usd: snapshot.spendRemainingMicroUsd,
    currency: 'USD',
    balance: {
      remaining_micro_usd: snapshot.cashMicroUsd + snapshot.creditMicroUsd,
      cash_micro_usd: snapshot.cashMicroUsd,
      credit_micro_usd: snapshot.creditMicroUsd,
      reserved_micro_usd: snapshot.reservedMicroUsd,
    },
    daily_spend: {
      limit_micro_usd: snapshot.dailyLimitMicroUsd,
      used_micro_usd: snapshot.dailyUsedMicroUsd,
      // Paused: no positive figure that could read as room to send (spec "Limits report"), as for
      // spend_remaining. The balance keeps its figure: it is the money fact a top-up is judged by.
      remaining_micro_usd: snapshot.serving === 'paused' ? Math.min(dailyRemaining, 0) : dailyRemaining,
      window: 'utc_day',
      resets_at: snapshot.dailyResetsAtS,
    },
    concurrency: { limit: snapshot.concurrencyLimit, scope: 'organization', on_exceed: 'refuse' },
    ramp_week: snapshot.rampWeek,
    ramp_defaults: snapshot.rampDefaults,
    override_in_force: snapshot.overrideInForce,
    rates: snapshot.rates.map((rate) => ({ ...rate, on_exceed: 'refuse' })),
  };
}

export const LIMITS_REPORT_SCHEMA: Record<string, unknown> = limitsReportSchema as Record<string, unknown>;

/** Compiled once, at module load: a request never pays for building the serializer. */
export const serializeLimitsReport: (report: LimitsReport) => string = fastJson(LIMITS_REPORT_SCHEMA);
