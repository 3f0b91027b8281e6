// The PostgreSQL adapter of the ledger (design.md "Ledger storage"): one ledger shared by every
// gateway process. Admission, settlement and the lease sweep are one statement each (SQL functions
// in store/postgres-schema.ts), so each is one round trip and one transaction that takes the
// organization's row lock first: no interleaving of processes can admit past a ceiling. The
// administrative writes run as short transactions here, under the same row lock, and reuse the
// rules of rules.ts; reads are one statement (one consistent snapshot).
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { RouteName } from '../ir.ts';
import type { AdmitResult, Ledger, LedgerConfig, PauseReason, ReleasedHold, Snapshot } from './types.ts';
import {
  assess, buildSnapshot, checkAmount, checkConfig, entryView, poolRatesAt, utcDay,
  type EntryRow, type OrgRecord, type Usage,
} from './rules.ts';

const EXPIRED_HOLD_RETENTION_MS = 7 * 86_400_000;

interface OrgRow {
  cash_micro_usd: number; credit_micro_usd: number; exempt: boolean; first_topup_at_ms: number | null;
  override_concurrency: number | null; override_daily_spend_micro_usd: number | null;
  paused_reason: PauseReason | null; paused_day: number | null; paused_daily_limit_micro_usd: number | null;
}
interface UsageRow { settled_today: number; held_today: number; reserved: number; in_flight: number }
interface PoolRow { pool: string; window_start_ms: number; admitted: number }

const toRecord = (r: OrgRow): OrgRecord => ({
  cash: r.cash_micro_usd,
  credit: r.credit_micro_usd,
  exempt: r.exempt,
  firstTopupAtMs: r.first_topup_at_ms,
  overrideConcurrency: r.override_concurrency,
  overrideDaily: r.override_daily_spend_micro_usd,
  pausedReason: r.paused_reason,
  pausedDay: r.paused_day,
  pausedDailyLimit: r.paused_daily_limit_micro_usd,
});

// One statement: the org, its live holds and today's spend, and every pool's window.
const SNAPSHOT_SQL = `
  SELECT o.cash_micro_usd, o.credit_micro_usd, o.exempt, o.first_topup_at_ms, o.override_concurrency,
         o.override_daily_spend_micro_usd, o.paused_reason, o.paused_day, o.paused_daily_limit_micro_usd,
         COALESCE((SELECT spent_micro_usd FROM ledger_daily_spend WHERE org_id = o.org_id AND day = $2), 0) AS settled_today,
         h.in_flight, h.reserved, h.held_today,
         (SELECT COALESCE(json_agg(json_build_object('pool', pool, 'window_start_ms', window_start_ms, 'admitted', admitted)), '[]')
            FROM ledger_pool_windows) AS pools
  FROM ledger_orgs o,
       LATERAL (SELECT count(*) AS in_flight, COALESCE(sum(amount_micro_usd), 0)::BIGINT AS reserved,
                       COALESCE(sum(amount_micro_usd) FILTER (WHERE day = $2), 0)::BIGINT AS held_today
                FROM ledger_holds WHERE org_id = o.org_id AND expired_at_ms IS NULL AND lease_expires_at_ms > $3) h
  WHERE o.org_id = $1`;

export interface PostgresLedgerOptions {
  /** The id of this process, stored on its holds. */
  processId: string;
  /** The instance (stable across restarts): a restarted process releases its predecessors' holds. */
  instanceId?: string;
  /** Told when a settlement could not be written and was queued for retry (no secrets in it). */
  onSettleDeferred?: (holdId: string, costMicroUsd: number, err: unknown) => void;
}

/** Queued settlements are retried this often while the database is unreachable. */
const SETTLE_RETRY_MS = 1_000;

export function openPostgresLedger(pool: Pool, config: LedgerConfig, opts: PostgresLedgerOptions): Ledger {
  const ramp = checkConfig(config);
  const rampWeeks = ramp.map((s) => s.week);
  const rampConc = ramp.map((s) => s.concurrency);
  const rampDaily = ramp.map((s) => s.daily_spend_micro_usd);
  // Per route: the names and limits of its shared pools, in configuration order (the lock order).
  const poolsOf = new Map<RouteName, { names: string[]; limits: number[] }>();
  for (const p of config.pools) {
    for (const r of p.routes) {
      const e = poolsOf.get(r) ?? { names: [], limits: [] };
      e.names.push(p.name); e.limits.push(p.per_minute);
      poolsOf.set(r, e);
    }
  }
  const noPools = { names: [] as string[], limits: [] as number[] };
  const instanceId = opts.instanceId ?? opts.processId;
  const released = (rows: Array<{ hold_id: string; org_id: string; amount_micro_usd: number; charged_micro_usd: number }>): ReleasedHold[] =>
    rows.map((h) => ({ holdId: h.hold_id, orgId: h.org_id, amountMicroUsd: h.amount_micro_usd, chargedMicroUsd: h.charged_micro_usd }));
  let closed = false;
  const live = (): void => { if (closed) throw new Error('ledger: closed'); };

  const readOrg = async (c: PoolClient, orgId: string, lock: boolean): Promise<OrgRecord> => {
    const r = await c.query<OrgRow>(`SELECT * FROM ledger_orgs WHERE org_id = $1${lock ? ' FOR UPDATE' : ''}`, [orgId]);
    if (!r.rows[0]) throw new Error(`ledger: unknown organization "${orgId}"`);
    return toRecord(r.rows[0]);
  };

  const readSnapshot = async (c: Pool | PoolClient, orgId: string, nowMs: number): Promise<Snapshot> => {
    const r = await c.query<OrgRow & UsageRow & { pools: PoolRow[] }>({ name: 'ledger_snapshot', text: SNAPSHOT_SQL, values: [orgId, utcDay(nowMs), nowMs] });
    const row = r.rows[0];
    if (!row) throw new Error(`ledger: unknown organization "${orgId}"`);
    const org = toRecord(row);
    const usage: Usage = { settledToday: row.settled_today, heldToday: row.held_today, reserved: row.reserved, inFlight: row.in_flight };
    const pools = new Map(row.pools.map((p) => [p.pool, p]));
    return buildSnapshot(org, usage, assess(org, usage, ramp, nowMs), nowMs, poolRatesAt(config.pools, (n) => pools.get(n), nowMs));
  };

  const log = (c: PoolClient, e: { org: string; at: number; kind: string; amount?: number; cash?: number; credit?: number; reason?: string; detail?: string }) =>
    c.query('INSERT INTO ledger_entries (org_id, at_ms, kind, amount_micro_usd, cash_micro_usd, credit_micro_usd, reason, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [e.org, e.at, e.kind, e.amount ?? null, e.cash ?? null, e.credit ?? null, e.reason ?? null, e.detail ?? null]);

  const setPause = (c: PoolClient, orgId: string, reason: PauseReason | null, nowMs: number | null, day: number | null, limit: number | null) =>
    c.query('UPDATE ledger_orgs SET paused_reason = $1, paused_at_ms = $2, paused_day = $3, paused_daily_limit_micro_usd = $4 WHERE org_id = $5',
      [reason, nowMs, day, limit, orgId]);

  /** Persists a pause whose lifting condition now holds (as admission would), inside `c`'s transaction. */
  const refreshPause = async (c: PoolClient, orgId: string, nowMs: number): Promise<void> => {
    const org = await readOrg(c, orgId, false);
    if (org.pausedReason === null) return;
    const snap = await readSnapshot(c, orgId, nowMs);
    if (snap.pausedReason === null) {
      await setPause(c, orgId, null, null, null, null);
      await log(c, { org: orgId, at: nowMs, kind: 'unpause', reason: org.pausedReason });
    }
  };

  /** One settlement; a deadlock victim (PostgreSQL picks one when two transactions wait on each
   *  other) is retried at once. */
  const settleOnce = async (holdId: string, cost: number, nowMs: number): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      try {
        await pool.query({ name: 'ledger_settle', text: 'SELECT ledger_settle($1, $2, $3)', values: [holdId, cost, nowMs] });
        return;
      } catch (err) {
        if (attempt >= 3 || !['40P01', '40001'].includes((err as { code?: string }).code ?? '')) throw err;
      }
    }
  };
  const deferred = new Map<string, { cost: number; nowMs: number }>();
  let retryTimer: NodeJS.Timeout | undefined;
  const flush = async (): Promise<void> => {
    for (const [holdId, d] of deferred) {
      try {
        await settleOnce(holdId, d.cost, d.nowMs);
        deferred.delete(holdId);
      } catch {
        return; // still unreachable: the next round tries again
      }
    }
    if (deferred.size === 0) { clearInterval(retryTimer); retryTimer = undefined; }
  };

  /** A short transaction holding the organization's row lock (the order admission takes locks in). */
  const withOrg = async <T>(orgId: string, fn: (c: PoolClient, org: OrgRecord) => Promise<T>): Promise<T> => {
    live();
    const c = await pool.connect();
    // A checked-out client has no error listener (pg-pool removes it): a connection lost
    // mid-transaction must reject the query, not crash the process.
    const onError = (): void => {};
    c.on('error', onError);
    try {
      await c.query('BEGIN');
      const org = await readOrg(c, orgId, true);
      const out = await fn(c, org);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      c.off('error', onError);
      c.release();
    }
  };

  return {
    async ensureOrg(orgId, nowMs) {
      live();
      await pool.query('INSERT INTO ledger_orgs (org_id, created_at_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING', [orgId, nowMs]);
    },

    async admit(input) {
      live();
      checkAmount('holdMicroUsd', input.holdMicroUsd);
      const holdId = randomUUID();
      const pools = poolsOf.get(input.route) ?? noPools;
      const r = await pool.query<{ code: string; retry_after_s: number | null; spend_remaining: number | null; exempt: boolean }>({
        name: 'ledger_admit',
        text: 'SELECT * FROM ledger_admit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)',
        values: [input.orgId, holdId, input.holdMicroUsd, input.nowMs, config.hold_lease_ms, instanceId, opts.processId, rampWeeks, rampConc, rampDaily, pools.names, pools.limits],
      });
      const row = r.rows[0]!;
      if (row.code === 'ok') return { ok: true, holdId, spendRemainingMicroUsd: row.spend_remaining!, asOfMs: input.nowMs, exempt: row.exempt };
      const out: AdmitResult = { ok: false, code: row.code as Exclude<AdmitResult, { ok: true }>['code'] };
      if (row.retry_after_s !== null) out.retryAfterS = row.retry_after_s;
      return out;
    },

    async settle(holdId, costMicroUsd, nowMs) {
      live();
      checkAmount('costMicroUsd', costMicroUsd);
      try {
        await settleOnce(holdId, costMicroUsd, nowMs);
      } catch (err) {
        // Never lost while this process lives: queued and retried until the database answers
        // (with the time it ended, so it counts on the right day); its hold meanwhile still
        // reserves the money, and a late settle after the lease ran out still charges.
        deferred.set(holdId, { cost: costMicroUsd, nowMs });
        opts.onSettleDeferred?.(holdId, costMicroUsd, err);
        retryTimer ??= setInterval(() => void flush(), SETTLE_RETRY_MS).unref();
      }
    },

    async renew(holds, nowMs) {
      live();
      if (holds.length === 0) return;
      for (const h of holds) checkAmount('deliveredMicroUsd', h.deliveredMicroUsd);
      await pool.query(`
        UPDATE ledger_holds h SET lease_expires_at_ms = $1, delivered_micro_usd = d.delivered
        FROM unnest($2::TEXT[], $3::BIGINT[]) AS d(id, delivered)
        WHERE h.hold_id = d.id AND h.expired_at_ms IS NULL AND h.lease_expires_at_ms > $4`,
      [nowMs + config.hold_lease_ms, holds.map((h) => h.holdId), holds.map((h) => h.deliveredMicroUsd), nowMs]);
    },

    async expireLeases(nowMs) {
      live();
      return released((await pool.query('SELECT * FROM ledger_expire($1, $2)', [nowMs, nowMs - EXPIRED_HOLD_RETENTION_MS])).rows);
    },

    async releasePredecessors(nowMs) {
      live();
      return released((await pool.query('SELECT * FROM ledger_release_instance($1, $2, $3)', [instanceId, opts.processId, nowMs])).rows);
    },

    async topup(orgId, amounts, nowMs) {
      const cash = checkAmount('cash_micro_usd', amounts.cash_micro_usd ?? 0);
      const credit = checkAmount('credit_micro_usd', amounts.credit_micro_usd ?? 0);
      return withOrg(orgId, async (c, org) => {
        await c.query('UPDATE ledger_orgs SET cash_micro_usd = $1, credit_micro_usd = $2 WHERE org_id = $3', [org.cash + cash, org.credit + credit, orgId]);
        // The ramp starts at the first cash top-up (see sqlite.ts).
        if (cash > 0) await c.query('UPDATE ledger_orgs SET first_topup_at_ms = $1 WHERE org_id = $2 AND first_topup_at_ms IS NULL', [nowMs, orgId]);
        await log(c, { org: orgId, at: nowMs, kind: 'topup', cash, credit, amount: cash + credit });
        await refreshPause(c, orgId, nowMs);
        return readSnapshot(c, orgId, nowMs);
      });
    },

    async setOverrides(orgId, o, nowMs) {
      if (o.concurrency != null) checkAmount('concurrency', o.concurrency);
      if (o.daily_spend_micro_usd != null) checkAmount('daily_spend_micro_usd', o.daily_spend_micro_usd);
      return withOrg(orgId, async (c, org) => {
        const concurrency = o.concurrency === undefined ? org.overrideConcurrency : o.concurrency;
        const daily = o.daily_spend_micro_usd === undefined ? org.overrideDaily : o.daily_spend_micro_usd;
        await c.query('UPDATE ledger_orgs SET override_concurrency = $1, override_daily_spend_micro_usd = $2 WHERE org_id = $3', [concurrency, daily, orgId]);
        await log(c, { org: orgId, at: nowMs, kind: 'overrides', detail: JSON.stringify({ concurrency, daily_spend_micro_usd: daily }) });
        await refreshPause(c, orgId, nowMs);
        return readSnapshot(c, orgId, nowMs);
      });
    },

    async startReview(orgId, nowMs) {
      return withOrg(orgId, async (c, org) => {
        if (org.pausedReason !== 'account_under_review') {
          // A spend_velocity_exceeded pause underneath keeps its day and ceiling (see sqlite.ts).
          const velocity = org.pausedReason === 'spend_velocity_exceeded';
          await setPause(c, orgId, 'account_under_review', nowMs, velocity ? org.pausedDay : null, velocity ? org.pausedDailyLimit : null);
          await log(c, { org: orgId, at: nowMs, kind: 'pause', reason: 'account_under_review' });
        }
        return readSnapshot(c, orgId, nowMs);
      });
    },

    async endReview(orgId, nowMs) {
      return withOrg(orgId, async (c, org) => {
        if (org.pausedReason === 'account_under_review') {
          await setPause(c, orgId, null, null, null, null);
          await log(c, { org: orgId, at: nowMs, kind: 'unpause', reason: 'account_under_review' });
          if (org.pausedDay !== null) {
            await setPause(c, orgId, 'spend_velocity_exceeded', nowMs, org.pausedDay, org.pausedDailyLimit);
            await log(c, { org: orgId, at: nowMs, kind: 'pause', reason: 'spend_velocity_exceeded', detail: JSON.stringify({ restored_after_review: true }) });
            await refreshPause(c, orgId, nowMs);
          }
        }
        return readSnapshot(c, orgId, nowMs);
      });
    },

    async setExempt(orgId, exempt, nowMs) {
      return withOrg(orgId, async (c, org) => {
        if (org.exempt !== exempt) {
          await c.query('UPDATE ledger_orgs SET exempt = $1 WHERE org_id = $2', [exempt, orgId]);
          await log(c, { org: orgId, at: nowMs, kind: 'exempt', detail: JSON.stringify({ exempt }) });
        }
        await refreshPause(c, orgId, nowMs);
        return readSnapshot(c, orgId, nowMs);
      });
    },

    async snapshot(orgId, nowMs) {
      live();
      return readSnapshot(pool, orgId, nowMs);
    },

    async entries(orgId, limit) {
      live();
      const exists = await pool.query('SELECT 1 FROM ledger_orgs WHERE org_id = $1', [orgId]);
      if (!exists.rowCount) throw new Error(`ledger: unknown organization "${orgId}"`);
      const r = await pool.query<EntryRow>(
        'SELECT id, at_ms, kind, hold_id, amount_micro_usd, cash_micro_usd, credit_micro_usd, reason, detail FROM ledger_entries WHERE org_id = $1 ORDER BY id DESC LIMIT $2',
        [orgId, Math.max(0, Math.floor(limit))]);
      return r.rows.map(entryView);
    },

    async close() {
      await flush();
      clearInterval(retryTimer);
      retryTimer = undefined;
      closed = true;
    },
  };
}
