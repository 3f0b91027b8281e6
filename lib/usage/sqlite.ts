// The SQLite adapter of the usage store: a `usage_records` table in the ledger's file (WAL).
// Batches are written in one transaction; aggregation happens in SQL, so a month of records is
// summed where it lies instead of being read into memory. The connection is the gateway's own and
// answers synchronously, so a report reads its range in slices of at most SLICE_ROWS records and
// lets the event loop run between them, and the retention prune deletes PRUNE_ROWS records per
// statement the same way (docs/usage.md "Bounds").
import type { Database, Statement } from 'better-sqlite3';
import type { UsageRecord } from './record.ts';
import { batchedPrune } from '../batched-prune.ts';
import {
  COLUMNS, SUM_COLUMNS, TooManyGroups, type Cursor, type Dimension, type UsageFilter, type UsageStore, buildGroups, finishTotals,
} from './store.ts';

const BOOLEAN = ['usage_estimated', 'client_closed', 'deadline_met'] as const;

const DDL = `
CREATE TABLE IF NOT EXISTS usage_records (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL, org_id TEXT NOT NULL, key_id TEXT NOT NULL,
  at_ms INTEGER NOT NULL, started_at_ms INTEGER NOT NULL,
  format TEXT NOT NULL, model TEXT, requested_route TEXT, served_route TEXT, tier TEXT, reason TEXT,
  retries INTEGER NOT NULL, fallbacks INTEGER NOT NULL, status INTEGER NOT NULL, error_code TEXT,
  input_tokens INTEGER NOT NULL, cached_input_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL, usage_estimated INTEGER NOT NULL,
  cost_micro_usd INTEGER NOT NULL, standard_cost_micro_usd INTEGER NOT NULL, key_mode TEXT,
  time_to_commit_ms INTEGER, duration_ms INTEGER NOT NULL, client_closed INTEGER NOT NULL, deadline_met INTEGER
) STRICT;
CREATE INDEX IF NOT EXISTS usage_records_org_at ON usage_records (org_id, at_ms, seq);
CREATE INDEX IF NOT EXISTS usage_records_at ON usage_records (at_ms);
`;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** Group expressions per dimension. UTC day and hour are grouped as numbers (an integer division
 *  costs a fraction of strftime per record) and written as ISO strings once per group (`label`). */
const GROUP_SQL: Record<Dimension, string> = {
  day: `at_ms / ${DAY_MS}`, hour: `at_ms / ${HOUR_MS}`,
  model: 'model', route: 'served_route', tier: 'tier', key: 'key_id', format: 'format', status: 'status', org: 'org_id',
};

type Value = string | number | null;

/** A dimension's value as the report shows it: "YYYY-MM-DD", "YYYY-MM-DDTHH:00:00Z" or as stored. */
function label(dimension: Dimension, value: Value): Value {
  if (dimension === 'day') return new Date(Number(value) * DAY_MS).toISOString().slice(0, 10);
  if (dimension === 'hour') return `${new Date(Number(value) * HOUR_MS).toISOString().slice(0, 13)}:00:00Z`;
  return value;
}

/** SQLite's ORDER BY on one column: NULL first, numbers by value, text bytewise (BINARY). A column
 *  holds numbers (status, day, hour) or text, never both. */
function compareValues(a: Value, b: Value): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'number') return a - (b as number);
  return compareText(a, b as string);
}

/** UTF-8 byte order (= code point order) of two strings, from their UTF-16 code units: at the first
 *  difference, surrogates (code points past U+FFFF) are moved above U+E000–U+FFFF, where UTF-16
 *  alone would put them below. */
function compareText(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

const codePointRank = (unit: number): number => (unit < 0xd800 ? unit : unit >= 0xe000 ? unit - 0x800 : unit + 0x2000);

/** Records one synchronous statement of a report reads at most: the range is cut where the
 *  (org_id, at_ms) or (at_ms) index says SLICE_ROWS records have passed, each slice is summed by
 *  its own statement, and the partial sums (all of them integer sums) are added up exactly. */
const SLICE_ROWS = 2_000;

/** Records one statement of the retention prune deletes at most (a few milliseconds each): an
 *  hour of records aging out at 83 requests/s is 300,000, which one DELETE held the process for
 *  about 1.4 s, and a backlog after a restart for longer. */
export const PRUNE_ROWS = 2_000;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A group's sums by column name, as finishTotals reads them. */
function sumsOf(sums: number[]): Record<string, number> {
  const named: Record<string, number> = {};
  for (let k = 0; k < SUM_COLUMNS.length; k++) named[SUM_COLUMNS[k]!] = sums[k]!;
  return named;
}

const SUMS = `COUNT(*) AS requests,
  SUM(status >= 400) AS errors,
  SUM(input_tokens) AS input_tokens, SUM(cached_input_tokens) AS cached_input_tokens,
  SUM(cache_write_tokens) AS cache_write_tokens, SUM(output_tokens) AS output_tokens, SUM(reasoning_tokens) AS reasoning_tokens,
  SUM(cost_micro_usd) AS cost_micro_usd,
  SUM(CASE WHEN key_mode = 'managed' THEN cost_micro_usd ELSE 0 END) AS managed_cost_micro_usd,
  SUM(standard_cost_micro_usd) AS standard_cost_micro_usd,
  SUM(tier IS NOT NULL) AS served_requests, SUM(tier = 'flex') AS flex_requests,
  SUM(deadline_met IS NOT NULL) AS deadline_requests, SUM(deadline_met = 1) AS deadline_met`;

function where(filter: UsageFilter): { sql: string; args: unknown[] } {
  const parts = ['at_ms >= ?', 'at_ms < ?'];
  const args: unknown[] = [filter.fromMs, filter.toMs];
  const eq = (column: string, value: unknown): void => {
    if (value !== undefined) { parts.push(`${column} = ?`); args.push(value); }
  };
  eq('org_id', filter.orgId); eq('model', filter.model); eq('served_route', filter.route);
  eq('tier', filter.tier); eq('status', filter.status); eq('key_id', filter.keyId);
  return { sql: parts.join(' AND '), args };
}

const ROWS = 8;

/** The bound values of `count` records from `from`, column by column (booleans as 0/1). */
function values(records: UsageRecord[], from: number, count: number): unknown[] {
  const out = new Array(count * COLUMNS.length);
  let k = 0;
  for (let i = from; i < from + count; i++) {
    const record = records[i]!;
    for (const column of COLUMNS) {
      const value = record[column];
      out[k++] = typeof value === 'boolean' ? (value ? 1 : 0) : value;
    }
  }
  return out;
}

export function openSqliteUsageStore(db: Database): UsageStore {
  db.exec(DDL);
  // Rows go in ROWS at a time, one statement each (the rest one by one): a fifth less CPU per
  // record than a statement per row (bench/README.md, "Usage records").
  const row = `(${COLUMNS.map(() => '?').join(', ')})`;
  const into = `INSERT INTO usage_records (${COLUMNS.join(', ')}) VALUES `;
  const insertRows = db.prepare(into + Array(ROWS).fill(row).join(', '));
  const insertOne = db.prepare(into + row);
  const insertMany = db.transaction((records: UsageRecord[]) => {
    let i = 0;
    for (; i + ROWS <= records.length; i += ROWS) insertRows.run(values(records, i, ROWS));
    for (; i < records.length; i++) insertOne.run(values(records, i, 1));
  });
  // The oldest PRUNE_ROWS expired records, found on the (at_ms) index (a range of it, never a scan
  // of the table) and deleted by their primary key.
  const pruneBatch = db.prepare<[number]>(`DELETE FROM usage_records WHERE seq IN
    (SELECT seq FROM usage_records WHERE at_ms < ? ORDER BY at_ms LIMIT ${PRUNE_ROWS})`);
  // Each statement runs whole within one turn; the file belongs to the caller (lib/app.ts), which
  // closes it after close() has stopped and waited for a running prune.
  const pruner = batchedPrune((beforeMs) => pruneBatch.run(beforeMs).changes, PRUNE_ROWS, () => db.open);
  // Queries are built from a bounded set of filters and dimensions: each shape is prepared once.
  const prepared = new Map<string, Statement>();
  const prep = (sql: string): Statement => {
    let statement = prepared.get(sql);
    if (!statement) { statement = db.prepare(sql); prepared.set(sql, statement); }
    return statement;
  };
  // Where the slice from `lo` ends: the time of the record SLICE_ROWS past it, read on an index
  // alone (records sharing that millisecond go to the next slice; more than SLICE_ROWS of them
  // in one millisecond make a slice of that millisecond).
  const boundaryOfOrg = db.prepare<[string, number, number]>(`SELECT at_ms FROM usage_records
    WHERE org_id = ? AND at_ms >= ? AND at_ms < ? ORDER BY at_ms LIMIT 1 OFFSET ${SLICE_ROWS}`).pluck();
  const boundaryOfAll = db.prepare<[number, number]>(`SELECT at_ms FROM usage_records
    WHERE at_ms >= ? AND at_ms < ? ORDER BY at_ms LIMIT 1 OFFSET ${SLICE_ROWS}`).pluck();
  const sliceEnd = (filter: UsageFilter, lo: number): number => {
    const boundary = (filter.orgId !== undefined
      ? boundaryOfOrg.get(filter.orgId, lo, filter.toMs)
      : boundaryOfAll.get(lo, filter.toMs)) as number | undefined;
    return boundary === undefined ? filter.toMs : Math.max(boundary, lo + 1);
  };
  // The same from the newest end: where the slice that ends at `hi` starts.
  const lastBoundaryOfOrg = db.prepare<[string, number, number]>(`SELECT at_ms FROM usage_records
    WHERE org_id = ? AND at_ms >= ? AND at_ms < ? ORDER BY at_ms DESC LIMIT 1 OFFSET ${SLICE_ROWS}`).pluck();
  const lastBoundaryOfAll = db.prepare<[number, number]>(`SELECT at_ms FROM usage_records
    WHERE at_ms >= ? AND at_ms < ? ORDER BY at_ms DESC LIMIT 1 OFFSET ${SLICE_ROWS}`).pluck();
  const sliceStart = (filter: UsageFilter, hi: number): number => {
    const boundary = (filter.orgId !== undefined
      ? lastBoundaryOfOrg.get(filter.orgId, filter.fromMs, hi)
      : lastBoundaryOfAll.get(filter.fromMs, hi)) as number | undefined;
    return boundary === undefined ? filter.fromMs : Math.min(boundary + 1, hi - 1);
  };

  return {
    async insert(records) { insertMany.immediate(records); },

    async aggregate(filter, groupBy, maxGroups = Infinity) {
      const selected = groupBy.map((dimension, i) => `${GROUP_SQL[dimension]} AS g${i}`);
      const grouping = groupBy.length ? ` GROUP BY ${groupBy.map((_, i) => `g${i}`).join(', ')}` : '';
      const partials = new Map<string, { values: Value[]; sums: number[] }>();
      for (let lo = filter.fromMs; lo < filter.toMs;) {
        const hi = sliceEnd(filter, lo);
        const conditions = where({ ...filter, fromMs: lo, toMs: hi });
        const rows = prep(`SELECT ${[...selected, SUMS].join(', ')} FROM usage_records WHERE ${conditions.sql}${grouping}`)
          .all(...conditions.args) as Array<Record<string, unknown>>;
        for (const row of rows) {
          const values = groupBy.map((_, i) => row[`g${i}`] as Value);
          const id = JSON.stringify(values);
          let partial = partials.get(id);
          if (!partial) {
            if (partials.size >= maxGroups && filter.topByCost === undefined) throw new TooManyGroups(maxGroups);
            partial = { values, sums: SUM_COLUMNS.map(() => 0) };
            partials.set(id, partial);
          }
          SUM_COLUMNS.forEach((column, k) => { partial!.sums[k]! += Number(row[column] ?? 0); });
        }
        lo = hi;
        if (lo < filter.toMs) await nextTurn();
      }
      const all = SUM_COLUMNS.map(() => 0);
      for (const partial of partials.values()) partial.sums.forEach((sum, k) => { all[k]! += sum; });
      if (!groupBy.length) return { groups: [], totals: finishTotals(sumsOf(all)) };
      const cost = SUM_COLUMNS.indexOf('cost_micro_usd');
      const byCost = filter.topByCost !== undefined;
      const sorted = [...partials.values()].sort((a, b) => {
        if (byCost && a.sums[cost] !== b.sums[cost]) return b.sums[cost]! - a.sums[cost]!;
        for (let i = 0; i < groupBy.length; i++) {
          const order = compareValues(a.values[i]!, b.values[i]!);
          if (order) return order;
        }
        return 0;
      }).slice(0, filter.topByCost);
      const groups = await buildGroups(sorted, groupBy, (partial, i) => label(groupBy[i]!, partial.values[i]!),
        (partial) => sumsOf(partial.sums));
      return { groups, totals: finishTotals(sumsOf(all)) };
    },

    // Newest first, a slice at a time from the newest end, until the page (and one more record,
    // to know there is more) is full: a filter that matches nothing reads the range in slices too.
    async list(filter, limit, after: Cursor | null) {
      const rows: Array<Record<string, unknown>> = [];
      const cursor = after ? ' AND (at_ms < ? OR (at_ms = ? AND seq < ?))' : '';
      const sql = (conditions: string): string =>
        `SELECT seq, ${COLUMNS.join(', ')} FROM usage_records WHERE ${conditions}${cursor} ORDER BY at_ms DESC, seq DESC LIMIT ?`;
      for (let hi = after ? Math.min(filter.toMs, after.atMs + 1) : filter.toMs; hi > filter.fromMs && rows.length <= limit;) {
        const lo = sliceStart(filter, hi);
        const conditions = where({ ...filter, fromMs: lo, toMs: hi });
        const args = [...conditions.args];
        if (after) args.push(after.atMs, after.atMs, after.seq);
        args.push(limit + 1 - rows.length);
        rows.push(...prep(sql(conditions.sql)).all(...args) as Array<Record<string, unknown>>);
        hi = lo;
        if (hi > filter.fromMs && rows.length <= limit) await nextTurn();
      }
      const more = rows.length > limit;
      const page = rows.slice(0, limit).map((row) => {
        for (const column of BOOLEAN) row[column] = row[column] === null ? null : row[column] === 1;
        return row as unknown as UsageRecord & { seq: number };
      });
      const last = page[page.length - 1];
      return { records: page, next: more && last ? { atMs: last.at_ms, seq: last.seq } : null };
    },

    prune: pruner.prune,
    close: pruner.close,
  };
}
