// The PostgreSQL adapter of the usage store: the `usage_records` table of the shared database
// (migration 2, lib/store/postgres-schema.ts), on the store's own connection pool, so every
// gateway process writes to and reads from the same records. Each flush is one multi-row INSERT;
// aggregation happens in SQL. Results equal the SQLite adapter's (test/usage/store-contract.test.ts):
// the same groups in the same order (NULLs first and bytewise text order, as SQLite sorts), the
// same UTC day and hour strings, the same rows and cursors.
import type pg from 'pg';
import type { UsageRecord } from './record.ts';
import { batchedPrune } from '../batched-prune.ts';
import {
  COLUMNS, TooManyGroups, type Cursor, type Dimension, type UsageFilter, type UsageStore, buildGroups, finishTotals,
} from './store.ts';

/** Columns read back as numbers whatever the pool's BIGINT parser (the store's reads them as numbers). */
const NUMERIC = ['seq', 'at_ms', 'started_at_ms', 'retries', 'fallbacks', 'status', 'input_tokens', 'cached_input_tokens',
  'cache_write_tokens', 'output_tokens', 'reasoning_tokens', 'cost_micro_usd', 'standard_cost_micro_usd',
  'time_to_commit_ms', 'duration_ms'] as const;

/** The table, as a migration of the shared schema (postgres-schema.ts). */
export const USAGE_DDL = `
CREATE TABLE usage_records (
  seq BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL, org_id TEXT NOT NULL, key_id TEXT NOT NULL,
  at_ms BIGINT NOT NULL, started_at_ms BIGINT NOT NULL,
  format TEXT NOT NULL, model TEXT, requested_route TEXT, served_route TEXT, tier TEXT, reason TEXT,
  retries INTEGER NOT NULL, fallbacks INTEGER NOT NULL, status INTEGER NOT NULL, error_code TEXT,
  input_tokens BIGINT NOT NULL, cached_input_tokens BIGINT NOT NULL, cache_write_tokens BIGINT NOT NULL,
  output_tokens BIGINT NOT NULL, reasoning_tokens BIGINT NOT NULL, usage_estimated BOOLEAN NOT NULL,
  cost_micro_usd BIGINT NOT NULL, standard_cost_micro_usd BIGINT NOT NULL, key_mode TEXT,
  time_to_commit_ms BIGINT, duration_ms BIGINT NOT NULL, client_closed BOOLEAN NOT NULL, deadline_met BOOLEAN
);
CREATE INDEX usage_records_org_at ON usage_records (org_id, at_ms, seq);
CREATE INDEX usage_records_at ON usage_records (at_ms);
`;

/** Group expressions per dimension: UTC day and hour as the SQLite adapter's strftime writes them;
 *  text compared bytewise (COLLATE "C") so groups sort as SQLite's BINARY collation sorts them. */
const GROUP_SQL: Record<Dimension, string> = {
  day: `to_char(to_timestamp(at_ms / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  hour: `to_char(to_timestamp(at_ms / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:00:00"Z"')`,
  model: 'model', route: 'served_route', tier: 'tier', key: 'key_id', format: 'format', status: 'status', org: 'org_id',
};
const TEXT_DIM: Record<Dimension, boolean> = {
  day: true, hour: true, model: true, route: true, tier: true, key: true, format: true, status: false, org: true,
};

const SUMS = `COUNT(*) AS requests,
  COUNT(*) FILTER (WHERE status >= 400) AS errors,
  SUM(input_tokens) AS input_tokens, SUM(cached_input_tokens) AS cached_input_tokens,
  SUM(cache_write_tokens) AS cache_write_tokens, SUM(output_tokens) AS output_tokens, SUM(reasoning_tokens) AS reasoning_tokens,
  SUM(cost_micro_usd) AS cost_micro_usd,
  SUM(CASE WHEN key_mode = 'managed' THEN cost_micro_usd ELSE 0 END) AS managed_cost_micro_usd,
  SUM(standard_cost_micro_usd) AS standard_cost_micro_usd,
  COUNT(tier) AS served_requests, COUNT(*) FILTER (WHERE tier = 'flex') AS flex_requests,
  COUNT(deadline_met) AS deadline_requests, COUNT(*) FILTER (WHERE deadline_met) AS deadline_met`;

/** 28 parameters a row; PostgreSQL takes at most 65 535 a statement. A flush (batch_size, 500 by
 *  default) is one statement; a larger one is split inside one transaction. */
const MAX_ROWS = Math.floor(65_535 / COLUMNS.length);

function where(filter: UsageFilter, args: unknown[]): string {
  args.push(filter.fromMs, filter.toMs);
  const parts = [`at_ms >= $${args.length - 1}`, `at_ms < $${args.length}`];
  const eq = (column: string, value: unknown): void => {
    if (value !== undefined) { args.push(value); parts.push(`${column} = $${args.length}`); }
  };
  eq('org_id', filter.orgId); eq('model', filter.model); eq('served_route', filter.route);
  eq('tier', filter.tier); eq('status', filter.status); eq('key_id', filter.keyId);
  return parts.join(' AND ');
}

function insertSql(records: UsageRecord[]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const placeholders = (record: UsageRecord): string =>
    COLUMNS.map((column) => { values.push(record[column]); return `$${values.length}`; }).join(', ');
  const rows = records.map((record) => `(${placeholders(record)})`);
  return { text: `INSERT INTO usage_records (${COLUMNS.join(', ')}) VALUES ${rows.join(', ')}`, values };
}

/** Records one statement of the retention prune deletes at most (about 20 ms of the server's time).
 *  The server cancels every statement after 12 s (statement_timeout, lib/store/postgres.ts), and
 *  one DELETE removes roughly 700,000 records a second (1.7 million in 2.4 s on a loaded 2-CPU
 *  machine): a backlog of a day or more of the whole fleet's records (retention_days lowered, or
 *  every gateway down for a while) in one statement would be cancelled and rolled back at every
 *  prune, and the table would never shrink. A batch holds one pooled connection and its rows'
 *  locks only briefly. */
export const PRUNE_ROWS = 10_000;

/** The oldest PRUNE_ROWS expired records on the (at_ms) index, deleted by primary key (as an array:
 *  an `IN (subquery)` is planned as a hash join over a scan of the whole table). Rows another
 *  process's prune holds are skipped, not waited for: that process deletes them. */
const PRUNE_BATCH = `DELETE FROM usage_records WHERE seq = ANY (ARRAY(
  SELECT seq FROM usage_records WHERE at_ms < $1 ORDER BY at_ms LIMIT ${PRUNE_ROWS} FOR UPDATE SKIP LOCKED))`;

/** `pool` belongs to the caller (the PostgreSQL store); close() leaves it open. */
export function openPostgresUsageStore(pool: pg.Pool): UsageStore {
  // The pool belongs to the PostgreSQL store (lib/store/postgres.ts), which ends it after close();
  // rows another process is pruning are left to it.
  const pruner = batchedPrune(
    async (beforeMs) => (await pool.query({ name: 'usage_prune', text: PRUNE_BATCH, values: [beforeMs] })).rowCount ?? 0,
    PRUNE_ROWS, () => !pool.ending,
  );
  return {
    async insert(records) {
      if (!records.length) return;
      if (records.length <= MAX_ROWS) { await pool.query(insertSql(records)); return; }
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        for (let i = 0; i < records.length; i += MAX_ROWS) await client.query(insertSql(records.slice(i, i + MAX_ROWS)));
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },

    // The query runs in the database, off the event loop; past maxGroups it stops at one more
    // group than allowed, so a report never brings more than that many rows into this process.
    async aggregate(filter, groupBy, maxGroups = Infinity) {
      const args: unknown[] = [];
      const conditions = where(filter, args);
      const totals = (await pool.query(`SELECT ${SUMS} FROM usage_records WHERE ${conditions}`, args)).rows[0] as Record<string, unknown>;
      if (!groupBy.length) return { groups: [], totals: finishTotals(totals) };
      const selected = groupBy.map((dimension) => `${GROUP_SQL[dimension]} AS "${dimension}"`);
      const order = groupBy.map((dimension) => `${GROUP_SQL[dimension]}${TEXT_DIM[dimension] ? ' COLLATE "C"' : ''} ASC NULLS FIRST`);
      const top = filter.topByCost;
      if (top !== undefined) order.unshift('SUM(cost_micro_usd) DESC');
      const limit = top ?? (Number.isFinite(maxGroups) ? maxGroups + 1 : undefined);
      const sql = `SELECT ${[...selected, SUMS].join(', ')} FROM usage_records WHERE ${conditions}`
        + ` GROUP BY ${groupBy.map((dimension) => GROUP_SQL[dimension]).join(', ')} ORDER BY ${order.join(', ')}`
        + (limit !== undefined ? ` LIMIT $${args.push(limit)}` : '');
      const rows = (await pool.query(sql, args)).rows as Array<Record<string, unknown>>;
      if (top === undefined && rows.length > maxGroups) throw new TooManyGroups(maxGroups);
      const groups = await buildGroups(rows, groupBy, (row, i) => row[groupBy[i]!] as string | number | null, (row) => row);
      return { groups, totals: finishTotals(totals) };
    },

    async list(filter, limit, after: Cursor | null) {
      const args: unknown[] = [];
      let sql = `SELECT seq, ${COLUMNS.join(', ')} FROM usage_records WHERE ${where(filter, args)}`;
      if (after) {
        args.push(after.atMs, after.seq);
        sql += ` AND (at_ms < $${args.length - 1} OR (at_ms = $${args.length - 1} AND seq < $${args.length}))`;
      }
      args.push(limit + 1);
      sql += ` ORDER BY at_ms DESC, seq DESC LIMIT $${args.length}`;
      const rows = (await pool.query(sql, args)).rows as Array<Record<string, unknown>>;
      const more = rows.length > limit;
      const page = rows.slice(0, limit).map((row) => {
        for (const column of NUMERIC) if (typeof row[column] === 'string') row[column] = Number(row[column]);
        return row as unknown as UsageRecord & { seq: number };
      });
      const last = page[page.length - 1];
      return { records: page, next: more && last ? { atMs: last.at_ms, seq: last.seq } : null };
    },

    prune: pruner.prune,
    close: pruner.close,
  };
}
