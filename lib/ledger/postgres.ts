// The PostgreSQL adapter of the ledger (design.md "Ledger storage"): one ledger shared by every
// gateway process. Admission, settlement and the lease sweep are one statement each (SQL functions
// in store/postgres-schema.ts), so each is one round trip and one transaction that takes the
// organization's row lock first: no interleaving of processes can admit past a ceiling. The
// administrative writes run as short transactions here, under the same row lock, and reuse the
// rules of rules.ts; reads are one statement (one consistent snapshot).
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { RouteName } from '../routes.ts';
import type { AdmitResult, Ledger, LedgerConfig, PauseReason, ReleasedHold, Snapshot, TopupResult } from './types.ts';
import {
  assess, buildSnapshot, checkAmount, checkConfig, entryView, orgRecordOf, poolRatesAt, replayOf, toppedUp, utcDay,
  type EntryRow, type OrgRecord, type OrgRow, type SpendAndHolds,
} from './rules.ts';
import { everySecond, retryingSettlements, type SettleReports, type Settlement } from './settle-retry.ts';
import { runningProcesses, predecessorGone, thisHost, type PredecessorRow, type ProcessRow } from './liveness.ts';

/** How long an expired hold is remembered (a late settle still finds it) and a process's row
 *  after its last heartbeat. */
const EXPIRED_HOLD_RETENTION_MS = 7 * 86_400_000;

interface SpendAndHoldsRow { settled_today: number; reserved: number; in_flight: number; lapsed_charge: number }
interface PoolRow { pool: string; window_start_ms: number; admitted: number }
interface ReleasedRow { hold_id: string; org_id: string; amount_micro_usd: number; charged_micro_usd: number }
interface EntryInput {
  org: string; at: number; kind: string; amount?: number; cash?: number; credit?: number; reason?: string; detail?: string;
  idempotencyKey?: string;
}


// One statement: the org, its live holds and today's spend, what its lapsed holds will be charged
// when admission releases them (ledger_release_hold charges delivered_micro_usd), and every pool's
// window.
const SNAPSHOT_SQL = `
  SELECT o.cash_micro_usd, o.credit_micro_usd, o.exempt, o.first_topup_at_ms, o.override_concurrency,
         o.override_daily_spend_micro_usd, o.paused_reason, o.paused_day, o.paused_daily_limit_micro_usd,
         COALESCE((SELECT spent_micro_usd FROM ledger_daily_spend WHERE org_id = o.org_id AND day = $2), 0)
           AS settled_today,
         h.in_flight, h.reserved, h.lapsed_charge,
         (SELECT COALESCE(json_agg(json_build_object('pool', pool, 'window_start_ms', window_start_ms, 'admitted', admitted)),
                          '[]')
            FROM ledger_pool_windows) AS pools
  FROM ledger_orgs o,
       LATERAL (SELECT count(*) FILTER (WHERE lease_expires_at_ms > $3) AS in_flight,
                       COALESCE(sum(amount_micro_usd) FILTER (WHERE lease_expires_at_ms > $3), 0)::BIGINT AS reserved,
                       COALESCE(sum(delivered_micro_usd) FILTER (WHERE lease_expires_at_ms <= $3), 0)::BIGINT AS lapsed_charge
                FROM ledger_holds WHERE org_id = o.org_id AND expired_at_ms IS NULL) h
  WHERE o.org_id = $1`;

// This process's heartbeat (liveness.ts) and its holds' renewals: one statement. The row is
// inserted here only when its registration did not go through (the database was unreachable then).
const RENEW_SQL = `
  WITH beat AS (
    INSERT INTO ledger_processes (process_id, instance_id, host, pid, heartbeat_at_ms, seal_fingerprint)
    VALUES ($5, $6, $7, $8, $4, $9)
    ON CONFLICT (process_id) DO UPDATE SET heartbeat_at_ms = EXCLUDED.heartbeat_at_ms)
  UPDATE ledger_holds h SET lease_expires_at_ms = $1, delivered_micro_usd = d.delivered
  FROM unnest($2::TEXT[], $3::BIGINT[]) AS d(id, delivered)
  WHERE h.hold_id = d.id AND h.expired_at_ms IS NULL AND h.lease_expires_at_ms > $4`;

// At start: this process registers (its first heartbeat and its sealing secret's fingerprint), old
// rows are forgotten, and the processes of this instance that left live holds are read with their rows.
const PREDECESSORS_SQL = `
  WITH beat AS (
    INSERT INTO ledger_processes (process_id, instance_id, host, pid, heartbeat_at_ms, seal_fingerprint)
    VALUES ($2, $1, $3, $4, $5, $7)
    ON CONFLICT (process_id) DO UPDATE SET heartbeat_at_ms = EXCLUDED.heartbeat_at_ms, seal_fingerprint = EXCLUDED.seal_fingerprint),
  forget AS (DELETE FROM ledger_processes WHERE heartbeat_at_ms < $6 AND process_id <> $2)
  SELECT h.process_id, p.host, p.pid, p.heartbeat_at_ms
  FROM (SELECT DISTINCT process_id FROM ledger_holds WHERE instance_id = $1 AND process_id <> $2 AND expired_at_ms IS NULL) h
  LEFT JOIN ledger_processes p ON p.process_id = h.process_id`;

// The running processes (liveness.ts): a heartbeat younger than the lease, not stopped.
const LIVE_PROCESSES_SQL = `
  SELECT process_id, instance_id, host, pid, heartbeat_at_ms, seal_fingerprint FROM ledger_processes
  WHERE heartbeat_at_ms > $1 AND NOT stopped ORDER BY instance_id, process_id`;

interface AdmitItem { org: string; hold: string; amount: number; now: number; pools: string[]; limits: number[] }
interface AdmitRow { code: string; retry_after_s: number | null; spend_remaining: number | null; exempt: boolean }

/** Most calls one statement carries. */
const GROUP_MAX = 256;

/** Group commit: the first call goes out at the end of its event-loop turn with whatever else the
 *  turn asked; calls made while a batch is in flight wait and go together in the next one, so
 *  under load a batch holds what arrived during one round trip and one WAL flush, and alone a
 *  call waits for nothing. `send` answers one result per item, in order. A batch that fails is
 *  run again one item at a time, so one bad item (an unknown organization) fails alone; when the
 *  database is unreachable each fails with its own error. */
function groupCommit<I, O>(send: (items: I[]) => Promise<O[]>): (item: I) => Promise<O> {
  type Waiting = { item: I; resolve: (o: O) => void; reject: (err: unknown) => void };
  let queue: Waiting[] = [];
  let busy = false;
  const one = (w: Waiting): Promise<void> => send([w.item]).then((out) => w.resolve(out[0]!), w.reject);
  const run = async (): Promise<void> => {
    busy = true;
    while (queue.length > 0) {
      const batch = queue.length > GROUP_MAX ? queue.splice(0, GROUP_MAX) : queue;
      if (batch === queue) queue = [];
      if (batch.length === 1) { await one(batch[0]!); continue; }
      try {
        const out = await send(batch.map((w) => w.item));
        batch.forEach((w, i) => w.resolve(out[i]!));
      } catch {
        await Promise.all(batch.map(one));
      }
    }
    busy = false;
  };
  return (item) => new Promise<O>((resolve, reject) => {
    if (queue.push({ item, resolve, reject }) === 1 && !busy) { busy = true; setImmediate(() => void run()); }
  });
}

export interface PostgresLedgerOptions extends SettleReports {
  /** The id of this process, stored on its holds. */
  processId: string;
  /** The instance (stable across restarts): a restarted process releases its predecessors' holds. */
  instanceId?: string;
  /** Where this process runs (liveness.ts; default: this host, process.pid). */
  host?: string;
  pid?: number;
}

/** `db` is the shared database's connection pool; a "pool" in this file is a shared rate pool of
 *  the ledger configuration. */
export function openPostgresLedger(db: Pool, config: LedgerConfig, opts: PostgresLedgerOptions): Ledger {
  const ramp = checkConfig(config);
  const rampWeeks = ramp.map((step) => step.week);
  const rampConc = ramp.map((step) => step.concurrency);
  const rampDaily = ramp.map((step) => step.daily_spend_micro_usd);
  // Per route: the names and limits of its shared pools, in configuration order (the lock order).
  const poolsOf = new Map<RouteName, { names: string[]; limits: number[] }>();
  for (const pool of config.pools) {
    for (const route of pool.routes) {
      const pools = poolsOf.get(route) ?? { names: [], limits: [] };
      pools.names.push(pool.name); pools.limits.push(pool.per_minute);
      poolsOf.set(route, pools);
    }
  }
  const noPools = { names: [] as string[], limits: [] as number[] };
  const poolOrder = config.pools.map((pool) => pool.name);   // the order every transaction locks pools in
  const instanceId = opts.instanceId ?? opts.processId;
  const me = { host: opts.host ?? thisHost(), pid: opts.pid ?? process.pid };   // what successors check this process by
  const released = (rows: ReleasedRow[]): ReleasedHold[] => rows.map((row) => ({
    holdId: row.hold_id, orgId: row.org_id, amountMicroUsd: row.amount_micro_usd, chargedMicroUsd: row.charged_micro_usd,
  }));
  let closed = false;
  const live = (): void => { if (closed) throw new Error('ledger: closed'); };
  let sealFingerprint: string | null = null;   // given at registration

  const readOrg = async (client: PoolClient, orgId: string, lock: boolean): Promise<OrgRecord> => {
    const result = await client.query<OrgRow>(`SELECT * FROM ledger_orgs WHERE org_id = $1${lock ? ' FOR UPDATE' : ''}`, [orgId]);
    if (!result.rows[0]) throw new Error(`ledger: unknown organization "${orgId}"`);
    return orgRecordOf(result.rows[0]);
  };

  /** The org's figures and its standing (rules.ts assess), in one statement. */
  const readStanding = async (client: Pool | PoolClient, orgId: string, nowMs: number) => {
    const result = await client.query<OrgRow & SpendAndHoldsRow & { pools: PoolRow[] }>({
      name: 'ledger_snapshot', text: SNAPSHOT_SQL, values: [orgId, utcDay(nowMs), nowMs],
    });
    const row = result.rows[0];
    if (!row) throw new Error(`ledger: unknown organization "${orgId}"`);
    const org = orgRecordOf(row);
    const spendAndHolds: SpendAndHolds = {
      settledToday: row.settled_today, reserved: row.reserved, inFlight: row.in_flight, lapsedCharge: row.lapsed_charge,
    };
    return { org, spendAndHolds, standing: assess(org, spendAndHolds, ramp, nowMs), pools: row.pools };
  };

  const readSnapshot = async (client: Pool | PoolClient, orgId: string, nowMs: number): Promise<Snapshot> => {
    const { org, spendAndHolds, standing, pools } = await readStanding(client, orgId, nowMs);
    const windows = new Map(pools.map((poolWindow) => [poolWindow.pool, poolWindow]));
    const rates = poolRatesAt(config.pools, (name) => windows.get(name), nowMs);
    return buildSnapshot(org, spendAndHolds, standing, nowMs, rates);
  };

  /** Appends to the organization's ledger entries (the audit trail the admin API shows). */
  const addEntry = (client: PoolClient, entry: EntryInput) =>
    client.query(`
      INSERT INTO ledger_entries (org_id, at_ms, kind, amount_micro_usd, cash_micro_usd, credit_micro_usd, reason, detail, idempotency_key)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [entry.org, entry.at, entry.kind, entry.amount ?? null, entry.cash ?? null, entry.credit ?? null, entry.reason ?? null,
      entry.detail ?? null, entry.idempotencyKey ?? null]);

  const setPause = (
    client: PoolClient, orgId: string, reason: PauseReason | null, nowMs: number | null, day: number | null, limit: number | null,
  ) =>
    client.query(`
      UPDATE ledger_orgs SET paused_reason = $1, paused_at_ms = $2, paused_day = $3, paused_daily_limit_micro_usd = $4
      WHERE org_id = $5`,
    [reason, nowMs, day, limit, orgId]);

  /** Persists a pause whose lifting condition now holds (as admission would), inside `client`'s
   *  transaction. It asks the stored pause's own rule (standing.pause), not the snapshot's, which
   *  also shows a pause not stored yet: a repaired balance lifts insufficient_balance even when
   *  the daily ceiling is reached, as admission would, which then stores spend_velocity_exceeded. */
  const refreshPause = async (client: PoolClient, orgId: string, nowMs: number): Promise<void> => {
    const org = await readOrg(client, orgId, false);
    if (org.pausedReason === null) return;
    const { standing } = await readStanding(client, orgId, nowMs);
    if (standing.pause === null) {
      await setPause(client, orgId, null, null, null, null);
      await addEntry(client, { org: orgId, at: nowMs, kind: 'unpause', reason: org.pausedReason });
    }
  };

  /** One statement for a batch; a deadlock victim (PostgreSQL picks one when two transactions
   *  wait on each other; the batches' lock order should leave none) is retried at once. */
  const retryingDeadlocks = async <T>(run: () => Promise<T>): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await run();
      } catch (err) {
        if (attempt >= 3 || !['40P01', '40001'].includes((err as { code?: string }).code ?? '')) throw err;
      }
    }
  };

  // A lone call runs the single function, which is cheaper than a batch of one.
  const admitMany = groupCommit(async (items: AdmitItem[]): Promise<AdmitRow[]> => (await retryingDeadlocks(() => {
    const [one] = items;
    if (items.length === 1) {
      return db.query<AdmitRow>({
        name: 'ledger_admit',
        text: 'SELECT * FROM ledger_admit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)',
        values: [one!.org, one!.hold, one!.amount, one!.now, config.hold_lease_ms, instanceId, opts.processId,
          rampWeeks, rampConc, rampDaily, one!.pools, one!.limits],
      });
    }
    const used = new Set(items.flatMap((item) => item.pools));
    return db.query<AdmitRow>({
      name: 'ledger_admit_many',
      text: 'SELECT * FROM ledger_admit_many($1::jsonb, $2, $3, $4, $5, $6, $7, $8)',
      values: [JSON.stringify(items), poolOrder.filter((name) => used.has(name)), config.hold_lease_ms, instanceId,
        opts.processId, rampWeeks, rampConc, rampDaily],
    });
  })).rows);

  const settleMany = groupCommit(async (items: Settlement[]): Promise<void[]> => {
    const [one] = items;
    await retryingDeadlocks(() => (items.length === 1
      ? db.query({ name: 'ledger_settle', text: 'SELECT ledger_settle($1, $2, $3)', values: [one!.holdId, one!.cost, one!.nowMs] })
      : db.query({
        name: 'ledger_settle_many',
        text: 'SELECT ledger_settle_many($1, $2, $3)',
        values: [items.map((i) => i.holdId), items.map((i) => i.cost), items.map((i) => i.nowMs)],
      })));
    return items.map(() => undefined);
  });

  const settlements = retryingSettlements(settleMany, { ...opts, settleRetryDelayMs: opts.settleRetryDelayMs ?? everySecond });

  /** A short transaction holding the organization's row lock (the order admission takes locks in). */
  const withOrg = async <T>(orgId: string, fn: (client: PoolClient, org: OrgRecord) => Promise<T>): Promise<T> => {
    live();
    const client = await db.connect();
    // A checked-out client has no error listener (pg-pool removes it): a connection lost
    // mid-transaction must reject the query, not crash the process.
    const onError = (): void => {};
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const org = await readOrg(client, orgId, true);
      const out = await fn(client, org);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.off('error', onError);
      client.release();
    }
  };

  return {
    async ensureOrg(orgId, nowMs) {
      live();
      await db.query('INSERT INTO ledger_orgs (org_id, created_at_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING', [orgId, nowMs]);
    },

    async admit(input) {
      live();
      checkAmount('holdMicroUsd', input.holdMicroUsd);
      const holdId = randomUUID();
      const pools = poolsOf.get(input.route) ?? noPools;
      const row = await admitMany({
        org: input.orgId, hold: holdId, amount: input.holdMicroUsd, now: input.nowMs, pools: pools.names, limits: pools.limits,
      });
      settlements.answered();
      if (row.code === 'ok') {
        return { ok: true, holdId, spendRemainingMicroUsd: row.spend_remaining!, asOfMs: input.nowMs, exempt: row.exempt };
      }
      const out: AdmitResult = { ok: false, code: row.code as Exclude<AdmitResult, { ok: true }>['code'] };
      if (row.retry_after_s !== null) out.retryAfterS = row.retry_after_s;
      return out;
    },

    async settle(holdId, costMicroUsd, nowMs) {
      live();
      const settlement = { holdId, cost: checkAmount('costMicroUsd', costMicroUsd), nowMs };
      // Never lost while this process lives (settle-retry.ts): a failed write is queued and retried.
      await settleMany(settlement).then(settlements.answered, (err) => settlements.defer(settlement, err));
    },

    async renew(holds, nowMs) {
      live();
      for (const hold of holds) checkAmount('deliveredMicroUsd', hold.deliveredMicroUsd);
      await db.query({
        name: 'ledger_renew',
        text: RENEW_SQL,
        values: [nowMs + config.hold_lease_ms, holds.map((hold) => hold.holdId), holds.map((hold) => hold.deliveredMicroUsd), nowMs,
          opts.processId, instanceId, me.host, me.pid, sealFingerprint],
      });
    },

    async expireLeases(nowMs) {
      live();
      return released((await db.query('SELECT * FROM ledger_expire($1, $2)', [nowMs, nowMs - EXPIRED_HOLD_RETENTION_MS])).rows);
    },

    async releasePredecessors(nowMs, seal) {
      live();
      sealFingerprint = seal ?? null;
      // Whether a process is gone is decided here (its pid is checked on this host), then its
      // holds released in one statement: a process found gone cannot come back (ids are per start).
      const { rows } = await db.query<PredecessorRow>(PREDECESSORS_SQL,
        [instanceId, opts.processId, me.host, me.pid, nowMs, nowMs - EXPIRED_HOLD_RETENTION_MS, sealFingerprint]);
      const gone = rows.filter((row) => predecessorGone(row, me, nowMs, config.hold_lease_ms)).map((row) => row.process_id);
      if (gone.length === 0) return [];
      const result = await db.query('SELECT * FROM ledger_release_processes($1, $2, $3)', [instanceId, gone, nowMs]);
      return released(result.rows);
    },

    async liveProcesses(nowMs) {
      live();
      const { rows } = await db.query<ProcessRow>(LIVE_PROCESSES_SQL, [nowMs - config.hold_lease_ms]);
      return runningProcesses(rows, opts.processId, me);
    },

    async topup(orgId, amounts, nowMs, idempotencyKey) {
      const cash = checkAmount('cash_micro_usd', amounts.cash_micro_usd ?? 0);
      const credit = checkAmount('credit_micro_usd', amounts.credit_micro_usd ?? 0);
      return withOrg(orgId, async (client, org): Promise<TopupResult> => {
        // The org's row lock (withOrg) orders two top-ups with one key: the second finds the first.
        if (idempotencyKey !== undefined) {
          const earlier = await client.query<{ cash_micro_usd: number | null; credit_micro_usd: number | null }>(
            'SELECT cash_micro_usd, credit_micro_usd FROM ledger_entries WHERE org_id = $1 AND idempotency_key = $2',
            [orgId, idempotencyKey]);
          if (replayOf(earlier.rows[0], cash, credit)) {
            return { ...await readSnapshot(client, orgId, nowMs), replayed: true };
          }
        }
        const after = toppedUp(org, cash, credit);
        await client.query('UPDATE ledger_orgs SET cash_micro_usd = $1, credit_micro_usd = $2 WHERE org_id = $3',
          [after.cash, after.credit, orgId]);
        // The ramp starts at the first cash top-up (see sqlite.ts).
        if (cash > 0) {
          await client.query('UPDATE ledger_orgs SET first_topup_at_ms = $1 WHERE org_id = $2 AND first_topup_at_ms IS NULL',
            [nowMs, orgId]);
        }
        await addEntry(client, { org: orgId, at: nowMs, kind: 'topup', cash, credit, amount: cash + credit, idempotencyKey });
        await refreshPause(client, orgId, nowMs);
        return readSnapshot(client, orgId, nowMs);
      });
    },

    async setOverrides(orgId, overrides, nowMs) {
      if (overrides.concurrency != null) checkAmount('concurrency', overrides.concurrency);
      if (overrides.daily_spend_micro_usd != null) checkAmount('daily_spend_micro_usd', overrides.daily_spend_micro_usd);
      return withOrg(orgId, async (client, org) => {
        const concurrency = overrides.concurrency === undefined ? org.overrideConcurrency : overrides.concurrency;
        const daily = overrides.daily_spend_micro_usd === undefined ? org.overrideDaily : overrides.daily_spend_micro_usd;
        await client.query('UPDATE ledger_orgs SET override_concurrency = $1, override_daily_spend_micro_usd = $2 WHERE org_id = $3',
          [concurrency, daily, orgId]);
        await addEntry(client, {
          org: orgId, at: nowMs, kind: 'overrides', detail: JSON.stringify({ concurrency, daily_spend_micro_usd: daily }),
        });
        await refreshPause(client, orgId, nowMs);
        return readSnapshot(client, orgId, nowMs);
      });
    },

    async startReview(orgId, nowMs) {
      return withOrg(orgId, async (client, org) => {
        if (org.pausedReason !== 'account_under_review') {
          // A spend_velocity_exceeded pause underneath keeps its day and ceiling (see sqlite.ts).
          const velocity = org.pausedReason === 'spend_velocity_exceeded';
          await setPause(client, orgId, 'account_under_review', nowMs,
            velocity ? org.pausedDay : null, velocity ? org.pausedDailyLimit : null);
          await addEntry(client, { org: orgId, at: nowMs, kind: 'pause', reason: 'account_under_review' });
        }
        return readSnapshot(client, orgId, nowMs);
      });
    },

    async endReview(orgId, nowMs) {
      return withOrg(orgId, async (client, org) => {
        if (org.pausedReason === 'account_under_review') {
          await setPause(client, orgId, null, null, null, null);
          await addEntry(client, { org: orgId, at: nowMs, kind: 'unpause', reason: 'account_under_review' });
          if (org.pausedDay !== null) {
            await setPause(client, orgId, 'spend_velocity_exceeded', nowMs, org.pausedDay, org.pausedDailyLimit);
            await addEntry(client, {
              org: orgId, at: nowMs, kind: 'pause', reason: 'spend_velocity_exceeded',
              detail: JSON.stringify({ restored_after_review: true }),
            });
            await refreshPause(client, orgId, nowMs);
          }
        }
        return readSnapshot(client, orgId, nowMs);
      });
    },

    async setExempt(orgId, exempt, nowMs) {
      return withOrg(orgId, async (client, org) => {
        if (org.exempt !== exempt) {
          await client.query('UPDATE ledger_orgs SET exempt = $1 WHERE org_id = $2', [exempt, orgId]);
          await addEntry(client, { org: orgId, at: nowMs, kind: 'exempt', detail: JSON.stringify({ exempt }) });
        }
        await refreshPause(client, orgId, nowMs);
        return readSnapshot(client, orgId, nowMs);
      });
    },

    async snapshot(orgId, nowMs) {
      live();
      return readSnapshot(db, orgId, nowMs);
    },

    async entries(orgId, limit) {
      live();
      const exists = await db.query('SELECT 1 FROM ledger_orgs WHERE org_id = $1', [orgId]);
      if (!exists.rowCount) throw new Error(`ledger: unknown organization "${orgId}"`);
      const result = await db.query<EntryRow>(`
        SELECT id, at_ms, kind, hold_id, amount_micro_usd, cash_micro_usd, credit_micro_usd, reason, detail, idempotency_key
        FROM ledger_entries WHERE org_id = $1 ORDER BY id DESC LIMIT $2`,
      [orgId, Math.max(0, Math.floor(limit))]);
      return result.rows.map(entryView);
    },

    async close() {
      closed = true;
      await settlements.close();
      // Not running any more: it no longer counts against a reseal (liveness.ts sealPeers). Not
      // written (the database unreachable): the row lapses with its heartbeat's lease.
      await db.query('UPDATE ledger_processes SET stopped = true WHERE process_id = $1', [opts.processId]).catch(() => {});
    },
  };
}
