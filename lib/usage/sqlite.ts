// The SQLite adapter of the usage store: a `usage_records` table in the ledger's file (WAL).
// Batches are written in one transaction; aggregation happens in SQL, so a month of records is
// summed where it lies instead of being read into memory.
import type { Database, Statement } from 'better-sqlite3';
import type { UsageRecord } from './record.ts';
import { COLUMNS, type Cursor, type Dimension, type UsageFilter, type UsageStore, finishTotals } from './store.ts';

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

/** Group expressions per dimension (UTC day and hour as ISO strings). */
const GROUP_SQL: Record<Dimension, string> = {
  day: "strftime('%Y-%m-%d', at_ms / 1000, 'unixepoch')",
  hour: "strftime('%Y-%m-%dT%H:00:00Z', at_ms / 1000, 'unixepoch')",
  model: 'model', route: 'served_route', tier: 'tier', key: 'key_id', format: 'format', status: 'status', org: 'org_id',
};

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
  const prune = db.prepare<[number]>('DELETE FROM usage_records WHERE at_ms < ?');
  // Queries are built from a bounded set of filters and dimensions: each shape is prepared once.
  const prepared = new Map<string, Statement>();
  const prep = (sql: string): Statement => {
    let statement = prepared.get(sql);
    if (!statement) { statement = db.prepare(sql); prepared.set(sql, statement); }
    return statement;
  };

  return {
    async insert(records) { insertMany.immediate(records); },

    async aggregate(filter, groupBy) {
      const conditions = where(filter);
      const selected = groupBy.map((dimension) => `${GROUP_SQL[dimension]} AS "${dimension}"`);
      const order = groupBy.map((dimension) => `"${dimension}"`);
      const sql = `SELECT ${[...selected, SUMS].join(', ')} FROM usage_records WHERE ${conditions.sql}`
        + (groupBy.length ? ` GROUP BY ${order.join(', ')} ORDER BY ${order.join(', ')}` : '');
      const rows = prep(sql).all(...conditions.args) as Array<Record<string, unknown>>;
      const totalsRow = groupBy.length
        ? prep(`SELECT ${SUMS} FROM usage_records WHERE ${conditions.sql}`).get(...conditions.args) as Record<string, unknown>
        : rows[0]!;
      const groups = groupBy.length
        ? rows.map((row) => ({
          ...Object.fromEntries(groupBy.map((dimension) => [dimension, row[dimension] as string | number | null])),
          ...finishTotals(row),
        }))
        : [];
      return { groups, totals: finishTotals(totalsRow) };
    },

    async list(filter, limit, after: Cursor | null) {
      const conditions = where(filter);
      let sql = `SELECT seq, ${COLUMNS.join(', ')} FROM usage_records WHERE ${conditions.sql}`;
      const args = [...conditions.args];
      if (after) { sql += ' AND (at_ms < ? OR (at_ms = ? AND seq < ?))'; args.push(after.atMs, after.atMs, after.seq); }
      sql += ' ORDER BY at_ms DESC, seq DESC LIMIT ?';
      args.push(limit + 1);
      const rows = prep(sql).all(...args) as Array<Record<string, unknown>>;
      const more = rows.length > limit;
      const page = rows.slice(0, limit).map((row) => {
        for (const column of BOOLEAN) row[column] = row[column] === null ? null : row[column] === 1;
        return row as unknown as UsageRecord & { seq: number };
      });
      const last = page[page.length - 1];
      return { records: page, next: more && last ? { atMs: last.at_ms, seq: last.seq } : null };
    },

    async prune(beforeMs) { return prune.run(beforeMs).changes; },
    async close() { /* the file belongs to the caller (lib/app.ts) */ },
  };
}
