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
  /** Aggregates only: answer the `topByCost` groups with the highest cost_micro_usd, highest first
   *  (ties in dimension order), with the totals of every record; max_groups does not apply. The
   *  usage API sets it for the operator's group_by=org alone (lib/usage/query.ts). */
  topByCost?: number;
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

/** An aggregate that would answer more than `maxGroups` groups: thrown before they are all built
 *  (docs/usage.md "Bounds"). */
export class TooManyGroups extends Error {
  constructor(readonly maxGroups: number) { super(`more than ${maxGroups} groups`); }
}

export interface UsageStore {
  insert(records: UsageRecord[]): Promise<void>;
  /** Totals and, with dimensions, the groups in dimension order; throws TooManyGroups past
   *  `maxGroups` groups (default unbounded). */
  aggregate(filter: UsageFilter, groupBy: Dimension[], maxGroups?: number): Promise<{ groups: UsageGroup[]; totals: UsageTotals }>;
  list(filter: UsageFilter, limit: number, after: Cursor | null): Promise<UsagePage>;
  /** Deletes records that ended before the instant; returns how many. */
  prune(beforeMs: number): Promise<number>;
  close(): Promise<void>;
}

/** The summed columns of an aggregate row (every one additive, so partial sums add up exactly). */
export const SUM_COLUMNS = [
  'requests', 'errors', 'input_tokens', 'cached_input_tokens', 'cache_write_tokens', 'output_tokens', 'reasoning_tokens',
  'cost_micro_usd', 'managed_cost_micro_usd', 'standard_cost_micro_usd', 'served_requests', 'flex_requests',
  'deadline_requests', 'deadline_met',
] as const;

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

const GROUPS_PER_TURN = 1_000;

/** Shared by adapters: report groups from their rows, the dimensions first (in group_by order),
 *  then the totals; a thousand per event-loop turn, as ten thousand cost tens of milliseconds. */
export async function buildGroups<T>(
  rows: T[], groupBy: readonly Dimension[],
  valueOf: (row: T, i: number) => string | number | null, sumsOf: (row: T) => Record<string, unknown>,
): Promise<UsageGroup[]> {
  const groups: UsageGroup[] = [];
  for (let start = 0; start < rows.length; start += GROUPS_PER_TURN) {
    if (start) await new Promise((resolve) => setImmediate(resolve));
    for (let r = start; r < Math.min(rows.length, start + GROUPS_PER_TURN); r++) {
      const group: Record<string, unknown> = {};
      for (let i = 0; i < groupBy.length; i++) group[groupBy[i]!] = valueOf(rows[r]!, i);
      groups.push(Object.assign(group, finishTotals(sumsOf(rows[r]!))) as UsageGroup);
    }
  }
  return groups;
}

/** The record columns of the `usage_records` table, in insert order (both adapters). */
export const COLUMNS = [
  'id', 'org_id', 'key_id', 'at_ms', 'started_at_ms', 'format', 'model', 'requested_route', 'served_route', 'tier',
  'reason', 'retries', 'fallbacks', 'status', 'error_code', 'input_tokens', 'cached_input_tokens', 'cache_write_tokens',
  'output_tokens', 'reasoning_tokens', 'usage_estimated', 'cost_micro_usd', 'standard_cost_micro_usd', 'key_mode',
  'time_to_commit_ms', 'duration_ms', 'client_closed', 'deadline_met',
] as const;
