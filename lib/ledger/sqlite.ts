// The SQLite adapter of the ledger. The caller opens the better-sqlite3
// file (WAL) and owns it; this module keeps its `ledger_` tables in it. Every write runs in an
// IMMEDIATE transaction: SQLite takes the file's write lock at BEGIN, so admission is atomic across
// every connection and process sharing the file, and a check can never be raced by another
// admission between reading the figures and placing the hold. Admissions and settlements arriving
// in one event-loop turn share one such transaction (group commit, below). The lock is waited for
// briefly, with the event loop free between tries (lib/sqlite-lock.ts): another connection holding it
// (an operator's sqlite3 session) refuses an admission with 503 within LOCK_PATIENCE_MS, defers a
// settlement (settle-retry.ts), leaves a renewal to the next sweep and fails an administrative
// write (the admin API answers 503 store_unavailable), and never freezes the process.
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { RouteName } from '../routes.ts';
import type {
  AdmitInput, AdmitResult, HoldOwner, HoldRenewal, Ledger, LedgerConfig, Overrides, PauseReason, ReleasedHold, SharedPool, Snapshot,
  TopupResult,
} from './types.ts';
import { migrateLedger } from './sqlite-schema.ts';
import { isLocked, lockRetryDelayMs, retryWhileLocked, serveWithShortLockWaits, LOCK_PATIENCE_MS } from '../sqlite-lock.ts';
import { runningProcesses, predecessorGone, thisHost, type PredecessorRow, type ProcessRow } from './liveness.ts';
import { retryingSettlements, type SettleReports, type Settlement } from './settle-retry.ts';
import {
  assess, buildSnapshot, checkAmount, checkConfig, debit, entryView, lateSettlement, orgRecordOf, pauseDue, poolRatesAt, replayOf, toppedUp,
  utcDay,
  POOL_WINDOW_MS,
  type EntryRow, type OrgRecord, type OrgRow, type Standing, type SpendAndHolds,
} from './rules.ts';

const HOLD_COLS = 'hold_id, org_id, amount_micro_usd, expired_at_ms, delivered_micro_usd, charged_micro_usd';

/** An expired hold is remembered this long so a late settle still charges the real cost; a
 *  process's heartbeat row, this long after its last beat. */
const EXPIRED_HOLD_RETENTION_MS = 7 * 86_400_000;

interface HoldRow {
  hold_id: string; org_id: string; amount_micro_usd: number; expired_at_ms: number | null;
  delivered_micro_usd: number; charged_micro_usd: number;
}
interface HoldTotals { in_flight: number; reserved: number }
interface LapsedTotals extends HoldTotals { delivered: number }
type PredecessorHold = HoldRow & PredecessorRow;
interface EntryInput {
  org: string; at: number; kind: string; hold?: string | null; amount?: number | null;
  cash?: number | null; credit?: number | null; reason?: string | null; detail?: string | null; idempotencyKey?: string | null;
}


export function openSqliteLedger(
  db: Database, config: LedgerConfig, owner: HoldOwner = { instanceId: randomUUID(), processId: randomUUID() },
  reports: SettleReports = {},
): Ledger {
  const ramp = checkConfig(config);
  migrateLedger(db);
  // The migration was the start's long write (another process's start may wait for it): from here
  // on the connection serves, and a write waits for another connection's lock only briefly.
  serveWithShortLockWaits(db);
  const me = { host: owner.host ?? thisHost(), pid: owner.pid ?? process.pid };   // what successors check this process by

  const poolsByRoute = new Map<RouteName, SharedPool[]>();
  for (const pool of config.pools) {
    for (const route of pool.routes) poolsByRoute.set(route, [...(poolsByRoute.get(route) ?? []), pool]);
  }

  // Prepared once: a statement is parsed and planned at start, not per request.
  const statements = {
    insertOrg: db.prepare<[string, number]>('INSERT OR IGNORE INTO ledger_orgs (org_id, created_at_ms) VALUES (?, ?)'),
    // The columns orgRecordOf reads, not *: a row costs a request about 0.2 us per column.
    org: db.prepare<[string], OrgRow>(`
      SELECT cash_micro_usd, credit_micro_usd, exempt, first_topup_at_ms, override_concurrency,
             override_daily_spend_micro_usd, paused_reason, paused_day, paused_daily_limit_micro_usd
      FROM ledger_orgs WHERE org_id = ?`),
    money: db.prepare<[string], { cash: number; credit: number }>(
      'SELECT cash_micro_usd AS cash, credit_micro_usd AS credit FROM ledger_orgs WHERE org_id = ?'),
    setMoney: db.prepare<[number, number, string]>('UPDATE ledger_orgs SET cash_micro_usd = ?, credit_micro_usd = ? WHERE org_id = ?'),
    setFirstTopup: db.prepare<[number, string]>(
      'UPDATE ledger_orgs SET first_topup_at_ms = ? WHERE org_id = ? AND first_topup_at_ms IS NULL'),
    setPause: db.prepare<[PauseReason | null, number | null, number | null, number | null, string]>(
      'UPDATE ledger_orgs SET paused_reason = ?, paused_at_ms = ?, paused_day = ?, paused_daily_limit_micro_usd = ? WHERE org_id = ?'),
    setOverrides: db.prepare<[number | null, number | null, string]>(
      'UPDATE ledger_orgs SET override_concurrency = ?, override_daily_spend_micro_usd = ? WHERE org_id = ?'),
    setExempt: db.prepare<[number, string]>('UPDATE ledger_orgs SET exempt = ? WHERE org_id = ?'),
    // The live holds (kept by triggers, sqlite-schema.ts), and those of them whose lease ran out
    // but that no one has marked expired yet, which do not count. Every day's row counts: a live
    // hold counts against today's ceiling whatever day it was placed (rules.ts assess). The rows
    // stay keyed by day, as schema version 3 made them, so that a process of an earlier build
    // still running on the same file reads and writes them unchanged.
    liveHolds: db.prepare<[string], HoldTotals>(`
      SELECT COALESCE(SUM(holds), 0) AS in_flight, COALESCE(SUM(reserved_micro_usd), 0) AS reserved
      FROM ledger_live_holds WHERE org_id = ?`),
    lapsedHolds: db.prepare<[string, number], LapsedTotals>(`
      SELECT COUNT(*) AS in_flight, COALESCE(SUM(amount_micro_usd), 0) AS reserved,
             COALESCE(SUM(delivered_micro_usd), 0) AS delivered
      FROM ledger_holds WHERE org_id = ? AND expired_at_ms IS NULL AND lease_expires_at_ms <= ?`),
    forgetIdleDays: db.prepare<[number]>('DELETE FROM ledger_live_holds WHERE holds = 0 AND day < ?'),
    spent: db.prepare<[string, number], number>(
      'SELECT spent_micro_usd FROM ledger_daily_spend WHERE org_id = ? AND day = ?').pluck(),
    addSpend: db.prepare<[string, number, number]>(`
      INSERT INTO ledger_daily_spend (org_id, day, spent_micro_usd) VALUES (?, ?, ?)
      ON CONFLICT (org_id, day) DO UPDATE SET spent_micro_usd = spent_micro_usd + excluded.spent_micro_usd`),
    insertHold: db.prepare<[string, string, number, number, number, number, string, string]>(`
      INSERT INTO ledger_holds
        (hold_id, org_id, amount_micro_usd, created_at_ms, lease_expires_at_ms, day, instance_id, process_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
    takeHold: db.prepare<[string], Pick<HoldRow, 'org_id' | 'expired_at_ms' | 'charged_micro_usd'> & { charged_credit_micro_usd: number }>(
      'DELETE FROM ledger_holds WHERE hold_id = ? RETURNING org_id, expired_at_ms, charged_micro_usd, charged_credit_micro_usd'),
    renewHold: db.prepare<[number, number, string, number]>(`
      UPDATE ledger_holds SET lease_expires_at_ms = ?, delivered_micro_usd = ?
      WHERE hold_id = ? AND expired_at_ms IS NULL AND lease_expires_at_ms > ?`),
    staleHolds: db.prepare<[number], HoldRow>(`
      SELECT ${HOLD_COLS} FROM ledger_holds
      WHERE expired_at_ms IS NULL AND lease_expires_at_ms <= ? ORDER BY lease_expires_at_ms`),
    staleHoldsOfOrg: db.prepare<[string, number], HoldRow>(`
      SELECT ${HOLD_COLS} FROM ledger_holds
      WHERE org_id = ? AND expired_at_ms IS NULL AND lease_expires_at_ms <= ?`),
    // This instance's earlier processes' live holds, each with its process's row (liveness.ts).
    predecessorHolds: db.prepare<[string, string], PredecessorHold>(`
      SELECT h.hold_id, h.org_id, h.amount_micro_usd, h.expired_at_ms, h.delivered_micro_usd, h.charged_micro_usd,
             h.process_id, p.host, p.pid, p.heartbeat_at_ms
      FROM ledger_holds h LEFT JOIN ledger_processes p ON p.process_id = h.process_id
      WHERE h.instance_id = ? AND h.process_id <> ? AND h.expired_at_ms IS NULL`),
    // The row is inserted by a renewal only when the registration did not go through (a lock).
    beat: db.prepare<[string, string, string, number, number, string | null]>(`
      INSERT INTO ledger_processes (process_id, instance_id, host, pid, heartbeat_at_ms, seal_fingerprint) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (process_id) DO UPDATE SET heartbeat_at_ms = excluded.heartbeat_at_ms`),
    register: db.prepare<[string, string, string, number, number, string | null]>(`
      INSERT INTO ledger_processes (process_id, instance_id, host, pid, heartbeat_at_ms, seal_fingerprint) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (process_id) DO UPDATE SET heartbeat_at_ms = excluded.heartbeat_at_ms, seal_fingerprint = excluded.seal_fingerprint`),
    // The running processes (liveness.ts): a heartbeat younger than the lease, not stopped.
    liveProcesses: db.prepare<[number], ProcessRow>(`
      SELECT process_id, instance_id, host, pid, heartbeat_at_ms, seal_fingerprint FROM ledger_processes
      WHERE heartbeat_at_ms > ? AND stopped = 0 ORDER BY instance_id, process_id`),
    stopped: db.prepare<[string]>('UPDATE ledger_processes SET stopped = 1 WHERE process_id = ?'),
    forgetProcesses: db.prepare<[number]>('DELETE FROM ledger_processes WHERE heartbeat_at_ms < ?'),
    markExpired: db.prepare<[number, number, number, string]>(
      'UPDATE ledger_holds SET expired_at_ms = ?, charged_micro_usd = ?, charged_credit_micro_usd = ? WHERE hold_id = ?'),
    forgetExpired: db.prepare<[number]>('DELETE FROM ledger_holds WHERE expired_at_ms IS NOT NULL AND expired_at_ms < ?'),
    pool: db.prepare<[string], { window_start_ms: number; admitted: number }>(
      'SELECT window_start_ms, admitted FROM ledger_pool_windows WHERE pool = ?'),
    countPool: db.prepare<{ pool: string; start: number }>(`
      INSERT INTO ledger_pool_windows (pool, window_start_ms, admitted) VALUES (@pool, @start, 1)
      ON CONFLICT (pool) DO UPDATE SET
        admitted = CASE WHEN window_start_ms = @start THEN admitted + 1 ELSE 1 END,
        window_start_ms = @start`),
    insertEntry: db.prepare<[
      string, number, string, string | null, number | null, number | null, number | null, string | null, string | null, string | null,
    ]>(`
      INSERT INTO ledger_entries (org_id, at_ms, kind, hold_id, amount_micro_usd, cash_micro_usd, credit_micro_usd, reason, detail, idempotency_key)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    entries: db.prepare<[string, number], EntryRow>(`
      SELECT id, at_ms, kind, hold_id, amount_micro_usd, cash_micro_usd, credit_micro_usd, reason, detail, idempotency_key
      FROM ledger_entries WHERE org_id = ? ORDER BY id DESC LIMIT ?`),
    topupByKey: db.prepare<[string, string], { cash_micro_usd: number | null; credit_micro_usd: number | null }>(
      'SELECT cash_micro_usd, credit_micro_usd FROM ledger_entries WHERE org_id = ? AND idempotency_key = ?'),
  };

  let closed = false;
  let sealFingerprint: string | null = null;   // given at registration

  // ── small named steps, shared by the transactions below ────────────────────────────────────

  /** Appends to the organization's ledger entries (the audit trail the admin API shows). */
  const addEntry = (entry: EntryInput): void => {
    statements.insertEntry.run(entry.org, entry.at, entry.kind, entry.hold ?? null, entry.amount ?? null, entry.cash ?? null,
      entry.credit ?? null, entry.reason ?? null, entry.detail ?? null, entry.idempotencyKey ?? null);
  };

  const live = (): void => {
    if (closed) throw new Error('ledger: closed');
  };

  const readOrg = (orgId: string): OrgRecord => {
    const row = statements.org.get(orgId);
    if (!row) throw new Error(`ledger: unknown organization "${orgId}"`);
    return orgRecordOf(row);
  };

  /** Today's spend and the live holds. `lapsedReleased`: the caller has just marked expired the
   *  organization's holds whose lease ran out, so none is left to subtract; else they are left
   *  out of the holds and their lapse charge counted, as admission will release them. */
  const readSpendAndHolds = (orgId: string, nowMs: number, lapsedReleased = false): SpendAndHolds => {
    const live = statements.liveHolds.get(orgId)!;
    const lapsed = lapsedReleased ? null : statements.lapsedHolds.get(orgId, nowMs)!;
    return {
      settledToday: statements.spent.get(orgId, utcDay(nowMs)) ?? 0,
      reserved: live.reserved - (lapsed?.reserved ?? 0),
      inFlight: live.in_flight - (lapsed?.in_flight ?? 0),
      lapsedCharge: lapsed?.delivered ?? 0,
    };
  };

  /** Releases a hold whose process is gone, charging the output its last renewal recorded (at
   *  the route's price; 0 for a request that never committed), as a settlement would. */
  const expireHold = (hold: HoldRow, nowMs: number): ReleasedHold => {
    const charge = hold.delivered_micro_usd;
    let cash = 0;
    let credit = 0;   // what it takes from credit, which a late settlement may give back (lateSettlement)
    if (charge > 0) {
      const org = readOrg(hold.org_id);
      const after = debit(org.cash, org.credit, charge);
      statements.setMoney.run(after.cash, after.credit, hold.org_id);
      statements.addSpend.run(hold.org_id, utcDay(nowMs), charge);
      cash = after.cash - org.cash;
      credit = after.credit - org.credit;
    }
    statements.markExpired.run(nowMs, charge, -credit, hold.hold_id);
    addEntry({
      org: hold.org_id, at: nowMs, kind: 'lease_expired', hold: hold.hold_id, amount: hold.amount_micro_usd,
      cash, credit, detail: JSON.stringify({ charged_micro_usd: charge }),
    });
    return { holdId: hold.hold_id, orgId: hold.org_id, amountMicroUsd: hold.amount_micro_usd, chargedMicroUsd: charge };
  };

  const setPause = (orgId: string, reason: PauseReason, nowMs: number, standing: Standing): void => {
    const velocity = reason === 'spend_velocity_exceeded';
    statements.setPause.run(reason, nowMs, velocity ? utcDay(nowMs) : null, velocity ? standing.dailyLimit : null, orgId);
    addEntry({ org: orgId, at: nowMs, kind: 'pause', reason });
  };

  const clearPause = (orgId: string, reason: PauseReason, nowMs: number): void => {
    statements.setPause.run(null, null, null, null, orgId);
    addEntry({ org: orgId, at: nowMs, kind: 'unpause', reason });
  };

  /** Reads the org's standing and persists a pause whose lifting condition now holds. */
  const readStanding = (
    orgId: string, nowMs: number, lapsedReleased = false,
  ): { org: OrgRecord; spendAndHolds: SpendAndHolds; standing: Standing } => {
    const org = readOrg(orgId);
    const spendAndHolds = readSpendAndHolds(orgId, nowMs, lapsedReleased);
    const standing = assess(org, spendAndHolds, ramp, nowMs);
    if (org.pausedReason !== null && standing.pause === null) {
      clearPause(orgId, org.pausedReason, nowMs);
      org.pausedReason = null;
    }
    return { org, spendAndHolds, standing };
  };

  const poolRates = (nowMs: number): Snapshot['rates'] =>
    poolRatesAt(config.pools, (name) => statements.pool.get(name), nowMs);

  /** null when no pool of the route is full; else the seconds until every full one frees. */
  const fullPoolWait = (route: RouteName, nowMs: number): number | null => {
    const windowStart = nowMs - (nowMs % POOL_WINDOW_MS);
    let wait: number | null = null;
    for (const pool of poolsByRoute.get(route) ?? []) {
      const row = statements.pool.get(pool.name);
      const used = row && row.window_start_ms === windowStart ? row.admitted : 0;
      if (used >= pool.per_minute) {
        const seconds = Math.max(1, Math.ceil((windowStart + POOL_WINDOW_MS - nowMs) / 1000));
        wait = Math.max(wait ?? 0, seconds);
      }
    }
    return wait;
  };

  /** Snapshot inside an already open transaction (after a write, or in a read transaction). */
  const snapshotNow = (orgId: string, nowMs: number): Snapshot => {
    const org = readOrg(orgId);
    const spendAndHolds = readSpendAndHolds(orgId, nowMs);
    return buildSnapshot(org, spendAndHolds, assess(org, spendAndHolds, ramp, nowMs), nowMs, poolRates(nowMs));
  };

  // ── admission: pause → balance → daily ceiling → concurrency → pool → hold ─────────────────

  const admitTx = db.transaction((input: AdmitInput): AdmitResult => {
    const { orgId, nowMs, route } = input;
    // A hold whose lease ran out belongs to a dead process: release it before counting.
    for (const hold of statements.staleHoldsOfOrg.all(orgId, nowMs)) expireHold(hold, nowMs);

    const { org, spendAndHolds, standing } = readStanding(orgId, nowMs, true);
    if (standing.pause !== null) return { ok: false, code: standing.pause };

    // Balance, then the daily ceiling (rules.ts pauseDue, the rule the limits report shows).
    const due = pauseDue(org.exempt, standing);
    if (due !== null) {
      setPause(orgId, due, nowMs, standing);
      return { ok: false, code: due };
    }
    if (!org.exempt && spendAndHolds.inFlight >= standing.concurrency) return { ok: false, code: 'rate_limit_exceeded', retryAfterS: 1 };
    const poolWait = fullPoolWait(route, nowMs);
    if (poolWait !== null) return { ok: false, code: 'rate_limit_exceeded', retryAfterS: poolWait };

    const holdId = randomUUID();
    statements.insertHold.run(holdId, orgId, input.holdMicroUsd, nowMs, nowMs + config.hold_lease_ms, utcDay(nowMs),
      owner.instanceId, owner.processId);
    const windowStart = nowMs - (nowMs % POOL_WINDOW_MS);
    for (const pool of poolsByRoute.get(route) ?? []) statements.countPool.run({ pool: pool.name, start: windowStart });
    return { ok: true, holdId, spendRemainingMicroUsd: standing.spendRemaining, asOfMs: nowMs, exempt: org.exempt };
  });

  // ── settlement and leases ──────────────────────────────────────────────────────────────────

  const settleTx = db.transaction((holdId: string, cost: number, nowMs: number): void => {
    const hold = statements.takeHold.get(holdId);
    if (!hold) return; // unknown or already settled: idempotent
    const org = statements.money.get(hold.org_id);
    if (!org) throw new Error(`ledger: unknown organization "${hold.org_id}"`);
    if (hold.expired_at_ms === null) {
      const after = debit(org.cash, org.credit, cost);
      statements.setMoney.run(after.cash, after.credit, hold.org_id);
      if (cost > 0) statements.addSpend.run(hold.org_id, utcDay(nowMs), cost);
      addEntry({
        org: hold.org_id, at: nowMs, kind: 'settle', hold: holdId, amount: cost,
        cash: after.cash - org.cash, credit: after.credit - org.credit,
      });
      return;
    }
    // A lapse released it first (a slow, not dead, owner): the real cost replaces the lapse
    // charge, the difference charged or given back (rules.ts lateSettlement), never twice. The
    // cost counts on the day the request ended, as a settlement on time would, and the lapse
    // charge leaves the day it was counted on, so no day's spend goes below what it settled.
    const late = lateSettlement(org.cash, org.credit, cost, hold.charged_micro_usd, hold.charged_credit_micro_usd);
    statements.setMoney.run(late.cash, late.credit, hold.org_id);
    if (hold.charged_micro_usd > 0) statements.addSpend.run(hold.org_id, utcDay(hold.expired_at_ms), -hold.charged_micro_usd);
    if (cost > 0) statements.addSpend.run(hold.org_id, utcDay(nowMs), cost);
    addEntry({
      org: hold.org_id, at: nowMs, kind: 'settle_after_expiry', hold: holdId, amount: late.amount,
      cash: late.cash - org.cash, credit: late.credit - org.credit, detail: JSON.stringify({ cost_micro_usd: cost }),
    });
  });

  /** This process is alive: its heartbeat (liveness.ts), refreshed with every renewal. */
  const beat = (nowMs: number): void => {
    statements.beat.run(owner.processId, owner.instanceId, me.host, me.pid, nowMs, sealFingerprint);
  };

  const renewTx = db.transaction((holds: HoldRenewal[], nowMs: number): void => {
    beat(nowMs);
    for (const hold of holds) statements.renewHold.run(nowMs + config.hold_lease_ms, hold.deliveredMicroUsd, hold.holdId, nowMs);
  });

  const expireTx = db.transaction((nowMs: number): ReleasedHold[] => {
    const released = statements.staleHolds.all(nowMs).map((hold) => expireHold(hold, nowMs));
    statements.forgetExpired.run(nowMs - EXPIRED_HOLD_RETENTION_MS);
    statements.forgetIdleDays.run(utcDay(nowMs));
    return released;
  });

  // At start: this process registers, and releases what its instance's earlier processes left,
  // only those provably gone (liveness.ts); a live one's holds (a second start on its port, a
  // restart while it drains) stay its own. Inside the write transaction no process can renew or
  // settle meanwhile.
  const predecessorsTx = db.transaction((nowMs: number): ReleasedHold[] => {
    statements.register.run(owner.processId, owner.instanceId, me.host, me.pid, nowMs, sealFingerprint);
    statements.forgetProcesses.run(nowMs - EXPIRED_HOLD_RETENTION_MS);
    const gone = new Map<string, boolean>();
    const isGone = (row: PredecessorHold): boolean => {
      let verdict = gone.get(row.process_id);
      if (verdict === undefined) gone.set(row.process_id, verdict = predecessorGone(row, me, nowMs, config.hold_lease_ms));
      return verdict;
    };
    return statements.predecessorHolds.all(owner.instanceId, owner.processId).filter(isGone).map((hold) => expireHold(hold, nowMs));
  });

  // ── administration ─────────────────────────────────────────────────────────────────────────

  const topupTx = db.transaction((orgId: string, cash: number, credit: number, nowMs: number, key: string | null): TopupResult => {
    const org = readOrg(orgId);
    if (key !== null && replayOf(statements.topupByKey.get(orgId, key), cash, credit)) {
      return { ...snapshotNow(orgId, nowMs), replayed: true };
    }
    const after = toppedUp(org, cash, credit);
    statements.setMoney.run(after.cash, after.credit, orgId);
    // The ramp starts at the first cash top-up: promo credit is granted, not paid, so an account
    // living on credit alone stays in week 0 ("never topped up") with week 0's ceilings.
    if (cash > 0) statements.setFirstTopup.run(nowMs, orgId);
    addEntry({ org: orgId, at: nowMs, kind: 'topup', cash, credit, amount: cash + credit, idempotencyKey: key });
    readStanding(orgId, nowMs); // repairs insufficient_balance once the balance is above zero
    return snapshotNow(orgId, nowMs);
  });

  const overridesTx = db.transaction((orgId: string, overrides: Overrides, nowMs: number): Snapshot => {
    const org = readOrg(orgId);
    // undefined leaves a figure as it is; null clears it (back to the schedule).
    const concurrency = overrides.concurrency === undefined ? org.overrideConcurrency : overrides.concurrency;
    const daily = overrides.daily_spend_micro_usd === undefined ? org.overrideDaily : overrides.daily_spend_micro_usd;
    statements.setOverrides.run(concurrency, daily, orgId);
    addEntry({ org: orgId, at: nowMs, kind: 'overrides', detail: JSON.stringify({ concurrency, daily_spend_micro_usd: daily }) });
    readStanding(orgId, nowMs); // a raised daily ceiling repairs spend_velocity_exceeded
    return snapshotNow(orgId, nowMs);
  });

  const reviewTx = db.transaction((orgId: string, start: boolean, nowMs: number): Snapshot => {
    const org = readOrg(orgId);
    if (start && org.pausedReason !== 'account_under_review') {
      // The review takes precedence over any other pause. A spend_velocity_exceeded pause under it
      // keeps its day and ceiling (paused_day, paused_daily_limit) so that the end of the review
      // gives it back: that pause lifts only at UTC midnight or by a raised ceiling, never because
      // used fell under the ceiling meanwhile. insufficient_balance needs no memory: admission
      // re-evaluates the balance after the review.
      const velocity = org.pausedReason === 'spend_velocity_exceeded';
      statements.setPause.run('account_under_review', nowMs,
        velocity ? org.pausedDay : null, velocity ? org.pausedDailyLimit : null, orgId);
      addEntry({ org: orgId, at: nowMs, kind: 'pause', reason: 'account_under_review' });
    } else if (!start && org.pausedReason === 'account_under_review') {
      clearPause(orgId, 'account_under_review', nowMs);
      if (org.pausedDay !== null) {
        statements.setPause.run('spend_velocity_exceeded', nowMs, org.pausedDay, org.pausedDailyLimit, orgId);
        addEntry({
          org: orgId, at: nowMs, kind: 'pause', reason: 'spend_velocity_exceeded',
          detail: JSON.stringify({ restored_after_review: true }),
        });
        readStanding(orgId, nowMs); // lifts it at once if the day rolled over or the ceiling was raised meanwhile
      }
    }
    return snapshotNow(orgId, nowMs);
  });

  const exemptTx = db.transaction((orgId: string, exempt: boolean, nowMs: number): Snapshot => {
    const org = readOrg(orgId);
    if (org.exempt !== exempt) {
      statements.setExempt.run(exempt ? 1 : 0, orgId);
      addEntry({ org: orgId, at: nowMs, kind: 'exempt', detail: JSON.stringify({ exempt }) });
    }
    readStanding(orgId, nowMs); // no ceiling: a spend_velocity_exceeded pause lifts
    return snapshotNow(orgId, nowMs);
  });

  const readTx = db.transaction((orgId: string, nowMs: number): Snapshot => snapshotNow(orgId, nowMs));

  // ── group commit: the admissions and settlements of one event-loop turn ─────────────────────
  // They run in arrival order inside one IMMEDIATE transaction, each as its own savepoint
  // (better-sqlite3 runs a transaction function called inside another as one): an admission that
  // throws rolls back alone, and each still sees every write before it, so admission stays atomic.
  // One commit for the turn writes the pages the requests share once (the organization's row, the
  // holds' index pages) instead of once per request: the commits, not the statements, were most
  // of the ledger's cost (bench/README.md, "The managed ledger"). Nothing is promised before the
  // commit: each call resolves after it. A turn refused by another connection's write lock is
  // tried again after lockRetryDelayMs, the event loop free meanwhile, together with what arrived
  // since; a call that has waited LOCK_PATIENCE_MS (real time, not the ledger's clock) is refused
  // with the lock's error: admission answers 503, a settlement is deferred (settle-retry.ts).
  type Queued = { op: () => unknown; resolve: (value: any) => void; reject: (err: unknown) => void; since: number };
  let queued: Queued[] = [];
  let lockedTurns = 0;   // turns refused by the lock in a row
  const turnTx = db.transaction((ops: Queued[]) => ops.map(({ op }) => {
    try { return { value: op() }; } catch (err) { return { err }; }
  }));
  const commitTurn = (): void => {
    const ops = queued;
    queued = [];
    let outcomes: ({ value: unknown } | { err: unknown })[];
    try {
      outcomes = turnTx.immediate(ops);
      lockedTurns = 0;
    } catch (err) {
      // The commit itself failed: the lock (below), a closed connection, the file.
      const now = performance.now();
      const locked = isLocked(err);
      for (const q of ops) {
        if (locked && now - q.since < LOCK_PATIENCE_MS) queued.push(q); else q.reject(err);
      }
      if (queued.length > 0) setTimeout(commitTurn, lockRetryDelayMs(lockedTurns++));
      return;
    }
    outcomes.forEach((o, i) => { if ('err' in o) ops[i]!.reject(o.err); else ops[i]!.resolve(o.value); });
  };
  const inThisTurn = <T>(op: () => T): Promise<T> => new Promise<T>((resolve, reject) => {
    if (queued.push({ op, resolve, reject, since: performance.now() }) === 1) setImmediate(commitTurn);
  });

  const writeSettlement = (s: Settlement): Promise<void> => inThisTurn(() => settleTx(s.holdId, s.cost, s.nowMs));
  const settlements = retryingSettlements(writeSettlement, reports);

  return {
    async ensureOrg(orgId, nowMs) {
      live();
      await retryWhileLocked(() => statements.insertOrg.run(orgId, nowMs));
    },

    async admit(input) {
      live();
      checkAmount('holdMicroUsd', input.holdMicroUsd);
      const result = await inThisTurn(() => admitTx(input));
      settlements.answered();
      return result;
    },

    async settle(holdId, costMicroUsd, nowMs) {
      live();
      const settlement = { holdId, cost: checkAmount('costMicroUsd', costMicroUsd), nowMs };
      // Never lost while this process lives (settle-retry.ts): a failed write is queued and retried.
      await writeSettlement(settlement).then(settlements.answered, (err) => settlements.defer(settlement, err));
    },

    async renew(holds, nowMs) {
      live();
      for (const hold of holds) checkAmount('deliveredMicroUsd', hold.deliveredMicroUsd);
      await retryWhileLocked(() => renewTx.immediate(holds, nowMs));   // refused: the next sweep renews
    },

    async expireLeases(nowMs) {
      live();
      return retryWhileLocked(() => expireTx.immediate(nowMs));
    },

    async releasePredecessors(nowMs, seal) {
      live();
      sealFingerprint = seal ?? null;
      return retryWhileLocked(() => predecessorsTx.immediate(nowMs));
    },

    async liveProcesses(nowMs) {
      live();
      return runningProcesses(statements.liveProcesses.all(nowMs - config.hold_lease_ms), owner.processId, me);
    },

    async topup(orgId, amounts, nowMs, idempotencyKey) {
      live();
      const cash = checkAmount('cash_micro_usd', amounts.cash_micro_usd ?? 0);
      const credit = checkAmount('credit_micro_usd', amounts.credit_micro_usd ?? 0);
      return retryWhileLocked(() => topupTx.immediate(orgId, cash, credit, nowMs, idempotencyKey ?? null));
    },

    async setOverrides(orgId, overrides, nowMs) {
      live();
      if (overrides.concurrency != null) checkAmount('concurrency', overrides.concurrency);
      if (overrides.daily_spend_micro_usd != null) checkAmount('daily_spend_micro_usd', overrides.daily_spend_micro_usd);
      return retryWhileLocked(() => overridesTx.immediate(orgId, overrides, nowMs));
    },

    async startReview(orgId, nowMs) {
      live();
      return retryWhileLocked(() => reviewTx.immediate(orgId, true, nowMs));
    },

    async endReview(orgId, nowMs) {
      live();
      return retryWhileLocked(() => reviewTx.immediate(orgId, false, nowMs));
    },

    async setExempt(orgId, exempt, nowMs) {
      live();
      return retryWhileLocked(() => exemptTx.immediate(orgId, exempt, nowMs));
    },

    async snapshot(orgId, nowMs) {
      live();
      // A read transaction: every figure comes from one consistent state of the file.
      return readTx.deferred(orgId, nowMs);
    },

    async entries(orgId, limit) {
      live();
      readOrg(orgId);
      return statements.entries.all(orgId, Math.max(0, Math.floor(limit))).map(entryView);
    },

    // The database handle belongs to whoever opened it (other modules share the file), so closing
    // the ledger only stops it from being used, after a last try at the queued settlements; the
    // opener closes the connection.
    async close() {
      closed = true;
      await settlements.close();
      // Not running any more: it no longer counts against a reseal (liveness.ts sealPeers). Not
      // written (another connection's lock): the row lapses with its heartbeat's lease.
      try { statements.stopped.run(owner.processId); } catch { /* see above */ }
    },
  };
}
