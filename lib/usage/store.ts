// Where usage records live: the same store as the ledger (one database to run and back up). One small
// interface, one adapter per store (sqlite.ts; postgres.ts on the shared database, chosen with
// GATEWAY_DATABASE_URL; docs/usage.md). Every method is async for the network adapter; the SQLite
// one answers synchronously inside.
import type { UsageRecord } from './record.ts';

export const DIMENSIONS = ['day', 'hour', 'model', 'route', 'tier', 'key', 'format', 'status', 'org'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** Filters shared by the aggregate and the raw listing. `orgId` undefined = every organization
 *  (operator only; the org-facing API always sets it). Times are epoch ms, [fromMs, toMs). */
export interface UsageFilter {
  orgId?: string;
  fromMs: number;
  toMs: number;
  model?: string;
  route?: string;
  tier?: string;
  status?: number;
  keyId?: string;
}

export interface UsageTotals {
  requests: number;
  errors: number;                   // status >= 400
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost_micro_usd: number;
  managed_cost_micro_usd: number;   // what the prepaid balance paid (reconciles with the ledger)
  standard_cost_micro_usd: number;
  savings_micro_usd: number;        // standard_cost − cost
  served_requests: number;          // a tier committed
  flex_requests: number;
  flex_share: number;               // flex_requests / served_requests (0 when none served)
  deadline_requests: number;        // served requests that had a duration start_within
  deadline_met: number;
}

export type UsageGroup = Partial<Record<Dimension, string | number | null>> & UsageTotals;

/** Newest first; the cursor is the position of the last record of the previous page. */
export interface Cursor { atMs: number; seq: number }
export interface UsagePage { records: Array<UsageRecord & { seq: number }>; next: Cursor | null }

export interface UsageStore {
  insert(records: UsageRecord[]): Promise<void>;
  aggregate(filter: UsageFilter, groupBy: Dimension[]): Promise<{ groups: UsageGroup[]; totals: UsageTotals }>;
  list(filter: UsageFilter, limit: number, after: Cursor | null): Promise<UsagePage>;
  /** Deletes records that ended before the instant; returns how many. */
  prune(beforeMs: number): Promise<number>;
  close(): Promise<void>;
}

/** Shared by adapters: the derived fields of a group from its sums. */
export function finishTotals(row: Record<string, unknown>): UsageTotals {
  const sum = (column: string): number => Number(row[column] ?? 0);
  const served = sum('served_requests');
  const flex = sum('flex_requests');
  return {
    requests: sum('requests'), errors: sum('errors'),
    input_tokens: sum('input_tokens'), cached_input_tokens: sum('cached_input_tokens'), cache_write_tokens: sum('cache_write_tokens'),
    output_tokens: sum('output_tokens'), reasoning_tokens: sum('reasoning_tokens'),
    cost_micro_usd: sum('cost_micro_usd'), managed_cost_micro_usd: sum('managed_cost_micro_usd'),
    standard_cost_micro_usd: sum('standard_cost_micro_usd'),
    savings_micro_usd: sum('standard_cost_micro_usd') - sum('cost_micro_usd'),
    served_requests: served, flex_requests: flex,
    flex_share: served ? Math.round((flex / served) * 10_000) / 10_000 : 0,
    deadline_requests: sum('deadline_requests'), deadline_met: sum('deadline_met'),
  };
}

/** The record columns of the `usage_records` table, in insert order (both adapters). */
export const COLUMNS = [
  'id', 'org_id', 'key_id', 'at_ms', 'started_at_ms', 'format', 'model', 'requested_route', 'served_route', 'tier',
  'reason', 'retries', 'fallbacks', 'status', 'error_code', 'input_tokens', 'cached_input_tokens', 'cache_write_tokens',
  'output_tokens', 'reasoning_tokens', 'usage_estimated', 'cost_micro_usd', 'standard_cost_micro_usd', 'key_mode',
  'time_to_commit_ms', 'duration_ms', 'client_closed', 'deadline_met',
] as const;
