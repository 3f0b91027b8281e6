// The money ledger of managed serving: balances, holds placed at admission and settled at the end.
// One interface, two adapters behind it (SQLite embedded, PostgreSQL shared). Integer micro-USD
// only, so sums are exact. Every method is asynchronous because the shared adapter is; the SQLite
// adapter answers from already-resolved promises.
import type { RouteName } from '../routes.ts';

export type PauseReason = 'account_under_review' | 'spend_velocity_exceeded' | 'insufficient_balance';
export type RefusalCode = PauseReason | 'rate_limit_exceeded';

export interface RampStep { week: number; concurrency: number; daily_spend_micro_usd: number }

export interface SharedPool {
  name: string;               // e.g. "direct", "cloud"
  routes: RouteName[];        // routes whose managed requests count against this pool
  per_minute: number;         // requests per minute for all managed organizations together
}

export interface LedgerConfig {
  /** Week → ceilings. Week 0 = never topped up; week n = n-th week since the first top-up
   *  (week 1 is the first 7 days after it). Past the last step the last step applies. */
  ramp: RampStep[];
  /** A hold not renewed for this long belongs to a dead process and is released, charged for the
   *  output its last renewal recorded (logged). */
  hold_lease_ms: number;
  /** How often a process renews its live holds (default: hold_lease_ms / 3). */
  hold_renew_ms?: number;
  pools: SharedPool[];
}

/** Who places holds: the instance (stable across restarts, e.g. host:port) and this process.
 *  `host` and `pid` say where this process runs (liveness.ts; default: this host, process.pid):
 *  what a successor of the instance checks it by before releasing its holds. */
export interface HoldOwner { instanceId: string; processId: string; host?: string; pid?: number }

/** A running process as the registry shows it (liveness.ts): its heartbeat younger than the
 *  lease and not stopped (a process that shut down says so as its ledger closes). */
export interface LiveProcess {
  processId: string;
  instanceId: string;
  host: string;
  pid: number;
  heartbeatAtMs: number;
  /** The fingerprint of the secret it seals provider keys with (store/secrets.ts sealFingerprint);
   *  null: a process of an earlier build, which does not publish it. */
  sealFingerprint: string | null;
  /** This process. */
  self: boolean;
}

export interface HoldRenewal { holdId: string; deliveredMicroUsd: number }
export interface ReleasedHold { holdId: string; orgId: string; amountMicroUsd: number; chargedMicroUsd: number }

export interface AdmitInput {
  orgId: string;
  holdMicroUsd: number;       // estimate at the price of the tier that may run (flex race: standard price)
  route: RouteName;           // selects the shared pool
  nowMs: number;
}

export type AdmitResult =
  | { ok: true; holdId: string; spendRemainingMicroUsd: number; asOfMs: number; exempt: boolean }
  | { ok: false; code: RefusalCode; retryAfterS?: number };

/** The snapshot after a top-up; `replayed` when its idempotency key named an earlier one. */
export type TopupResult = Snapshot & { replayed?: true };

export interface Snapshot {
  asOfMs: number;
  serving: 'ok' | 'paused';
  /** The pause the next managed request is refused with: the stored one in force, else the one
   *  admission would set now (rules.ts pauseAhead), so a pause shows before any refusal. */
  pausedReason: PauseReason | null;
  binding: 'balance' | 'daily_spend' | 'paused' | 'exempt';
  spendRemainingMicroUsd: number;
  cashMicroUsd: number;
  creditMicroUsd: number;
  reservedMicroUsd: number;
  dailyLimitMicroUsd: number;
  dailyUsedMicroUsd: number;       // settled today + every live hold
  dailyResetsAtS: number;
  concurrencyLimit: number;
  inFlight: number;
  exempt: boolean;
  rampWeek: number | null;
  rampDefaults: { concurrency: number; daily_spend_micro_usd: number } | null;
  overrideInForce: { concurrency: boolean; daily_spend: boolean } | null;
  rates: Array<{ name: string; scope: 'pool'; window_seconds: 60; limit: number; used: number }>;
}

/** Per-organization ceilings set by the operator: undefined leaves a figure as it is, null clears it. */
export interface Overrides { concurrency?: number | null; daily_spend_micro_usd?: number | null }

export interface Ledger {
  /** Creates the org's ledger row if missing (no money, week 0). */
  ensureOrg(orgId: string, nowMs: number): Promise<void>;
  /** The one atomic admission step: pause → balance → daily ceiling → concurrency → pool → hold. */
  admit(input: AdmitInput): Promise<AdmitResult>;
  /** Debits real cost (cash first, then credit), adds it to today's spend, releases the hold,
   *  decrements in-flight. Idempotent per holdId. After a lapse released the hold, the real cost
   *  replaces the lapse charge: the difference is charged or given back (rules.ts lateSettlement).
   *  A write the database does not take is queued and retried (settle-retry.ts): resolved means
   *  written or queued. */
  settle(holdId: string, costMicroUsd: number, nowMs: number): Promise<void>;
  /** Keeps live holds from expiring (called periodically by the process that owns them, with or
   *  without holds) and records, per hold, what the output delivered so far costs: what a lapse
   *  charges. Refreshes this process's heartbeat too (liveness.ts). */
  renew(holds: HoldRenewal[], nowMs: number): Promise<void>;
  /** Releases holds whose lease ran out, each charged what its last renewal recorded. */
  expireLeases(nowMs: number): Promise<ReleasedHold[]>;
  /** At start, once listening: registers this process (its first heartbeat, and the fingerprint
   *  of the secret it seals provider keys with, written here only) and releases the live holds of
   *  this instance's earlier processes that are provably gone (a crash and restart; liveness.ts),
   *  charged as a lapse, without waiting for their leases. A live one's are kept. */
  releasePredecessors(nowMs: number, sealFingerprint?: string): Promise<ReleasedHold[]>;
  /** The processes running now, this one included (liveness.ts sealPeers compares their secrets). */
  liveProcesses(nowMs: number): Promise<LiveProcess[]>;
  /** Credits the organization. With an idempotency key already used by a top-up of the same
   *  amounts, credits nothing and answers `replayed` (a retried request); of other amounts, throws
   *  IdempotencyConflictError. The key is checked and stored in the top-up's own transaction. */
  topup(orgId: string, amounts: { cash_micro_usd?: number; credit_micro_usd?: number }, nowMs: number,
    idempotencyKey?: string): Promise<TopupResult>;
  setOverrides(orgId: string, overrides: Overrides, nowMs: number): Promise<Snapshot>;
  startReview(orgId: string, nowMs: number): Promise<Snapshot>;
  endReview(orgId: string, nowMs: number): Promise<Snapshot>;
  setExempt(orgId: string, exempt: boolean, nowMs: number): Promise<Snapshot>;
  /** What admission would see now; throws if the record cannot be read. */
  snapshot(orgId: string, nowMs: number): Promise<Snapshot>;
  /** Admin view: snapshot plus recent entries (top-ups, settlements, pauses). */
  entries(orgId: string, limit: number): Promise<Array<Record<string, unknown>>>;
  /** Stops the ledger after a last try at the queued settlements (those still unwritten are
   *  reported), and marks this process stopped: it no longer counts as running (liveProcesses). */
  close(): Promise<void>;
}
