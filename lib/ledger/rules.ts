// The rules of managed admission that do not depend on storage: the UTC day, the ramp week, the
// ceilings in force, when a pause lifts by itself, when one is due, and the spend-remaining figure.
// The admission step and the snapshot both go through `assess` and `pauseDue`, so the limits
// report can never disagree with what admission would do at the same instant. Both adapters
// (SQLite, PostgreSQL) use this file; the PostgreSQL admission function (postgres-schema.ts)
// restates `assess` and `pauseDue` in SQL so that admission stays one round trip, and the same
// contract suite (test/ledger/report-agreement.test.ts among it) runs against both.
import type { LedgerConfig, PauseReason, RampStep, SharedPool, Snapshot } from './types.ts';

export const DAY_MS = 86_400_000;
export const WEEK_MS = 7 * DAY_MS;
export const POOL_WINDOW_MS = 60_000;

/** The ceiling figure reported for an exempt organization, which has no ceiling (spec "Limits").
 *  The report keeps the schema's integer type; a number no request can reach reads truthfully as
 *  "never binds" to a client that does arithmetic on it, where the schedule's numbers would
 *  under-report room (and go negative as the exempt org spends past them). */
export const UNBOUNDED = Number.MAX_SAFE_INTEGER;

export const utcDay = (ms: number): number => Math.floor(ms / DAY_MS);
export const nextUtcMidnightS = (ms: number): number => (utcDay(ms) + 1) * (DAY_MS / 1000);

/** Week 0 = never topped up; week 1 = the first 7 days from the first top-up, week 2 the next 7… */
export function rampWeek(firstTopupAtMs: number | null, nowMs: number): number {
  if (firstTopupAtMs === null) return 0;
  if (nowMs < firstTopupAtMs) return 1; // a clock behind the top-up's: still its first week
  return Math.floor((nowMs - firstTopupAtMs) / WEEK_MS) + 1;
}

/** The step with the greatest week at or below `week` (past the last step the last applies). */
export function rampStep(sortedRamp: readonly RampStep[], week: number): RampStep {
  let inForce = sortedRamp[0];
  for (const step of sortedRamp) if (step.week <= week) inForce = step;
  return inForce;
}

/** Throws on a configuration the ledger cannot run with; returns the ramp sorted by week. */
export function checkConfig(config: LedgerConfig): RampStep[] {
  if (config.ramp.length === 0) throw new Error('ledger config: ramp needs at least one step');
  for (const step of config.ramp) {
    for (const value of [step.week, step.concurrency, step.daily_spend_micro_usd]) {
      if (!Number.isSafeInteger(value) || value < 0) {
        throw new Error(`ledger config: ramp step values must be integers >= 0 (week ${step.week})`);
      }
    }
  }
  if (!Number.isSafeInteger(config.hold_lease_ms) || config.hold_lease_ms <= 0) {
    throw new Error('ledger config: hold_lease_ms must be a positive integer');
  }
  // A renewal must land at least twice per lease, so one late renewal (a slow sweep, a busy
  // database) does not let a live hold lapse: a lapsed hold frees its concurrency slot and its
  // reserved money while the request still streams. The default (max(1000, lease / 3), app.ts)
  // is not checked here: it passes for every lease the configuration schema accepts (>= 2000).
  const renew = config.hold_renew_ms;
  if (renew !== undefined && (!Number.isSafeInteger(renew) || renew <= 0 || renew * 2 > config.hold_lease_ms)) {
    throw new Error(`ledger config: hold_renew_ms (${renew}) must be a positive integer at most half of hold_lease_ms `
      + `(${config.hold_lease_ms}), so a hold is renewed at least twice per lease`);
  }
  const names = new Set<string>();
  for (const pool of config.pools) {
    if (names.has(pool.name)) throw new Error(`ledger config: pool "${pool.name}" declared twice`);
    names.add(pool.name);
    if (!Number.isSafeInteger(pool.per_minute) || pool.per_minute < 0) {
      throw new Error(`ledger config: pool "${pool.name}" per_minute must be an integer >= 0`);
    }
  }
  return [...config.ramp].sort((a, b) => a.week - b.week);
}

/** Money and counts handed to the ledger are integers; anything else is a caller bug. */
export function checkAmount(what: string, amount: unknown): number {
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0) {
    throw new Error(`ledger: ${what} must be an integer >= 0 (got ${String(amount)})`);
  }
  return amount;
}

/** A top-up that would take the balance (cash + credit) past 2^53 − 1 micro-USD, which neither the
 *  ledger's readers nor JavaScript hold exactly. Checked inside the top-up's transaction, so two
 *  concurrent top-ups cannot both pass it. */
export class BalanceOverflowError extends Error {
  constructor() { super(`the balance would pass ${Number.MAX_SAFE_INTEGER} micro-USD`); }
}

/** A top-up's idempotency key already names an earlier top-up of other amounts: a client bug, not
 *  a retry, so nothing is credited and the caller is told. */
export class IdempotencyConflictError extends Error {
  constructor() { super('this Idempotency-Key was used for a top-up of other amounts'); }
}

/** What a retried top-up finds under its idempotency key: the same amounts are a replay (nothing
 *  credited again, `true`), other amounts a conflict. No entry: `false`, a first top-up. */
export function replayOf(earlier: { cash_micro_usd: number | null; credit_micro_usd: number | null } | undefined,
  cash: number, credit: number): boolean {
  if (!earlier) return false;
  if ((earlier.cash_micro_usd ?? 0) !== cash || (earlier.credit_micro_usd ?? 0) !== credit) throw new IdempotencyConflictError();
  return true;
}

/** The balance after a top-up, refused past the exact range (BalanceOverflowError). */
export function toppedUp(org: Pick<OrgRecord, 'cash' | 'credit'>, cash: number, credit: number): { cash: number; credit: number } {
  if (org.cash + cash + org.credit + credit > Number.MAX_SAFE_INTEGER) throw new BalanceOverflowError();
  return { cash: org.cash + cash, credit: org.credit + credit };
}

/** Cash first, then credit. Cash does not go below zero while credit remains; once both are
 *  exhausted the rest is owed on cash (negative), which the next admission turns into a pause. */
export function debit(cash: number, credit: number, cost: number): { cash: number; credit: number } {
  const fromCash = Math.min(Math.max(cash, 0), cost);
  const fromCredit = Math.min(credit, cost - fromCash);
  return { cash: cash - fromCash - (cost - fromCash - fromCredit), credit: credit - fromCredit };
}

/** A settlement of a hold a lapse already released (its owner was slow, not dead): the owner's
 *  real cost is final. The lapse charged `charged` (its last renewal's upper bound on the output
 *  delivered), `chargedCredit` of it from credit; the settlement charges what is missing
 *  (`amount` > 0, as debit) or gives back what the lapse took over the cost (`amount` < 0), in the
 *  reverse of debit's order: first what it left owed on cash, then what it took from credit, then
 *  cash. So the organization pays the cost exactly, once, and promo credit never comes back as
 *  cash. The same rule in SQL: ledger_settle (store/postgres-schema.ts). */
export function lateSettlement(
  cash: number, credit: number, cost: number, charged: number, chargedCredit: number,
): { cash: number; credit: number; amount: number } {
  const amount = cost - charged;
  if (amount >= 0) return { ...debit(cash, credit, amount), amount };
  let back = -amount;
  const owed = Math.min(back, Math.max(-cash, 0));
  back -= owed;
  const toCredit = Math.min(back, chargedCredit);
  return { cash: cash + owed + back - toCredit, credit: credit + toCredit, amount };
}

/** The stored state of one organization, as any adapter reads it. */
export interface OrgRecord {
  cash: number;
  credit: number;
  exempt: boolean;
  firstTopupAtMs: number | null;
  overrideConcurrency: number | null;
  overrideDaily: number | null;
  pausedReason: PauseReason | null;
  /** For spend_velocity_exceeded: the UTC day it was set and the daily ceiling then in force. */
  pausedDay: number | null;
  pausedDailyLimit: number | null;
}

/** An organization's ledger row as either store reads it (SQLite answers booleans as 0 and 1). */
export interface OrgRow {
  cash_micro_usd: number; credit_micro_usd: number; exempt: boolean | number; first_topup_at_ms: number | null;
  override_concurrency: number | null; override_daily_spend_micro_usd: number | null;
  paused_reason: PauseReason | null; paused_day: number | null; paused_daily_limit_micro_usd: number | null;
}

export const orgRecordOf = (row: OrgRow): OrgRecord => ({
  cash: row.cash_micro_usd,
  credit: row.credit_micro_usd,
  exempt: row.exempt === true || row.exempt === 1,
  firstTopupAtMs: row.first_topup_at_ms,
  overrideConcurrency: row.override_concurrency,
  overrideDaily: row.override_daily_spend_micro_usd,
  pausedReason: row.paused_reason,
  pausedDay: row.paused_day,
  pausedDailyLimit: row.paused_daily_limit_micro_usd,
});

/** Live holds (lease not run out) and settled spend, as of `nowMs`: what the ceilings are measured against. */
export interface SpendAndHolds {
  settledToday: number;
  reserved: number;    // all live holds, whatever day they were placed
  inFlight: number;    // count of live holds
  /** What the holds whose lease ran out but that nobody has released yet will be charged (their
   *  last renewal's delivered output). Admission releases them before it compares anything, so
   *  this money is already gone from the balance and in today's spend for the request after; a
   *  read that does not release them (the snapshot) counts it so, and admission reads 0 here. */
  lapsedCharge: number;
}

export interface Standing {
  balance: number;
  dailyLimit: number;
  dailyUsed: number;
  concurrency: number;
  week: number | null;
  defaults: { concurrency: number; daily_spend_micro_usd: number } | null;
  overrideInForce: { concurrency: boolean; daily_spend: boolean } | null;
  /** The pause in force after the lifting rules, i.e. what admission would refuse with. */
  pause: PauseReason | null;
  /** What the x-service-spend-remaining header of a request admitted now carries. */
  spendRemaining: number;
}

export function assess(org: OrgRecord, spendAndHolds: SpendAndHolds, sortedRamp: readonly RampStep[], nowMs: number): Standing {
  // A lapse charge moves money out of cash + credit and into today's spend, whatever part it
  // takes from which (rules.ts debit), so the sums are exact without applying it part by part.
  const balance = org.cash + org.credit - spendAndHolds.lapsedCharge;
  // Every live hold counts against today's ceiling, also one placed before midnight: it is in
  // flight today and settles into today's spend. Counting it against the day it was placed let
  // the holds open at midnight count on no day at admission and then settle past the ceiling.
  const dailyUsed = spendAndHolds.settledToday + spendAndHolds.lapsedCharge + spendAndHolds.reserved;
  let week: number | null = null;
  let defaults: Standing['defaults'] = null;
  let overrideInForce: Standing['overrideInForce'] = null;
  let dailyLimit = UNBOUNDED;
  let concurrency = UNBOUNDED;
  if (!org.exempt) {
    week = rampWeek(org.firstTopupAtMs, nowMs);
    const step = rampStep(sortedRamp, week);
    defaults = { concurrency: step.concurrency, daily_spend_micro_usd: step.daily_spend_micro_usd };
    overrideInForce = { concurrency: org.overrideConcurrency !== null, daily_spend: org.overrideDaily !== null };
    concurrency = org.overrideConcurrency ?? step.concurrency;
    dailyLimit = org.overrideDaily ?? step.daily_spend_micro_usd;
  }
  const pause = pauseInForce(org, nowMs, balance, dailyLimit, dailyUsed);
  const spendRemaining = org.exempt ? balance : Math.min(balance, dailyLimit - dailyUsed);
  return { balance, dailyLimit, dailyUsed, concurrency, week, defaults, overrideInForce, pause, spendRemaining };
}

/** The pause admission sets when no stored pause is in force (spec "Managed serving state"):
 *  a balance at or below zero, then, unless exempt, a daily ceiling reached. Admission
 *  (sqlite.ts, and its SQL restatement `ledger_admit`) stores it and refuses with it; the snapshot
 *  shows it before any request has been refused, so the report never shows room admission refuses.
 *  Daily ceiling: refused once today's settled spend plus the live holds has reached the ceiling
 *  (used >= limit), before adding the new request's hold. At used == limit nothing is left, so any
 *  request would overspend; this mirrors the balance rule ("at or below zero") and means a refused
 *  request never followed a header that promised room. Not counting the new hold keeps a request
 *  that starts with room from pausing the org for the rest of the day; the overshoot is bounded by
 *  the last admitted hold (and its settlement). */
export function pauseDue(exempt: boolean, standing: Pick<Standing, 'balance' | 'dailyLimit' | 'dailyUsed'>): PauseReason | null {
  if (standing.balance <= 0) return 'insufficient_balance';
  if (!exempt && standing.dailyUsed >= standing.dailyLimit) return 'spend_velocity_exceeded';
  return null;
}

/** What the next managed request is refused with, in admission's order: the stored pause in
 *  force (a review over everything), else the pause admission would set now. */
export const pauseAhead = (exempt: boolean, standing: Standing): PauseReason | null =>
  standing.pause ?? pauseDue(exempt, standing);

/** The stored pause, unless its own lifting condition now holds (spec "Managed serving state"). */
function pauseInForce(org: OrgRecord, nowMs: number, balance: number, dailyLimit: number, dailyUsed: number): PauseReason | null {
  switch (org.pausedReason) {
    case null:
      return null;
    case 'account_under_review':
      return 'account_under_review'; // lifts only by endReview
    case 'insufficient_balance':
      return balance > 0 ? null : 'insufficient_balance';
    case 'spend_velocity_exceeded': {
      if (org.exempt) return null; // an exempt organization has no ceiling
      if (org.pausedDay !== utcDay(nowMs)) return null; // the UTC day rolled over
      // "A raised daily ceiling": the ceiling in force must be higher than the one the pause was
      // set under (override, or the schedule's next week) AND leave room over today's used. Used
      // alone falling (a hold settling below its estimate, a lease expiring) does not lift it:
      // the spec recovers this state only at UTC midnight or by a raised ceiling.
      const raised = org.pausedDailyLimit === null || dailyLimit > org.pausedDailyLimit;
      return raised && dailyLimit > dailyUsed ? null : 'spend_velocity_exceeded';
    }
  }
}

/** The snapshot every adapter reports, from the same figures admission reads. The pause shown is
 *  the one the next managed request would be refused with (pauseAhead), stored or not yet stored. */
export function buildSnapshot(
  org: OrgRecord, spendAndHolds: SpendAndHolds, standing: Standing, nowMs: number, rates: Snapshot['rates'],
): Snapshot {
  const pause = pauseAhead(org.exempt, standing);
  const paused = pause !== null;
  const balanceBinds = standing.balance <= standing.dailyLimit - standing.dailyUsed;
  // Cash and credit as admission will find them once it has released the lapsed holds.
  const money = spendAndHolds.lapsedCharge > 0 ? debit(org.cash, org.credit, spendAndHolds.lapsedCharge) : org;
  return {
    asOfMs: nowMs,
    serving: paused ? 'paused' : 'ok',
    pausedReason: pause,
    // A pause shows as the binding ceiling even for an exempt org: the spec wants the pause shown
    // "rather than a positive figure that could read as permission to send".
    binding: paused ? 'paused' : org.exempt ? 'exempt' : balanceBinds ? 'balance' : 'daily_spend',
    // Paused: no request would be admitted, so no positive figure is reported.
    spendRemainingMicroUsd: paused ? Math.min(standing.spendRemaining, 0) : standing.spendRemaining,
    cashMicroUsd: money.cash,
    creditMicroUsd: money.credit,
    reservedMicroUsd: spendAndHolds.reserved,
    dailyLimitMicroUsd: standing.dailyLimit,
    dailyUsedMicroUsd: standing.dailyUsed,
    dailyResetsAtS: nextUtcMidnightS(nowMs),
    concurrencyLimit: standing.concurrency,
    inFlight: spendAndHolds.inFlight,
    exempt: org.exempt,
    rampWeek: standing.week,
    rampDefaults: standing.defaults,
    overrideInForce: standing.overrideInForce,
    rates,
  };
}

/** The pools' use in the current fixed 60 s window, from each pool's stored window. */
export function poolRatesAt(
  pools: readonly SharedPool[], storedWindow: (pool: string) => { window_start_ms: number; admitted: number } | undefined, nowMs: number,
): Snapshot['rates'] {
  const windowStart = nowMs - (nowMs % POOL_WINDOW_MS);
  return pools.map((pool) => {
    const stored = storedWindow(pool.name);
    const used = stored && stored.window_start_ms === windowStart ? stored.admitted : 0;
    return { name: pool.name, scope: 'pool', window_seconds: 60, limit: pool.per_minute, used };
  });
}

/** A ledger entry row as the admin API shows it (null columns left out, detail spread in). */
export interface EntryRow {
  id: number; at_ms: number; kind: string; hold_id: string | null; amount_micro_usd: number | null;
  cash_micro_usd: number | null; credit_micro_usd: number | null; reason: string | null; detail: string | null;
  idempotency_key: string | null;
}
export function entryView(row: EntryRow): Record<string, unknown> {
  const out: Record<string, unknown> = { id: row.id, at_ms: row.at_ms, kind: row.kind };
  if (row.hold_id !== null) out.hold_id = row.hold_id;
  if (row.amount_micro_usd !== null) out.amount_micro_usd = row.amount_micro_usd;
  if (row.cash_micro_usd !== null) out.cash_micro_usd = row.cash_micro_usd;
  if (row.credit_micro_usd !== null) out.credit_micro_usd = row.credit_micro_usd;
  if (row.reason !== null) out.reason = row.reason;
  if (row.idempotency_key !== null) out.idempotency_key = row.idempotency_key;
  if (row.detail !== null) Object.assign(out, JSON.parse(row.detail) as Record<string, unknown>);
  return out;
}
