// The shared PostgreSQL schema, as versioned migrations (postgres.ts runs the missing ones at start
// under an advisory lock). The tables mirror the SQLite ones (sqlite-orgs.ts, ledger/sqlite-schema.ts)
// with BIGINT money and times. Admission, settlement and the lease sweep are SQL functions so that
// each is one round trip and one transaction: `ledger_admit` restates ledger/rules.ts `assess`
// (the contract suite runs the same tests against both adapters to keep them equal).

import { USAGE_DDL } from '../usage/postgres.ts';
import { STATE_OWNERS_DDL } from './postgres-state-owners.ts';

export interface Migration { version: number; name: string; sql: string }

const V1_TABLES = `
CREATE TABLE orgs (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at BIGINT NOT NULL);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY, org_id TEXT NOT NULL REFERENCES orgs(id), hash TEXT NOT NULL UNIQUE,
  default_start_within TEXT, created_at BIGINT NOT NULL, revoked_at BIGINT, scopes TEXT NOT NULL DEFAULT 'inference');
CREATE TABLE provider_keys (
  org_id TEXT NOT NULL REFERENCES orgs(id), route TEXT NOT NULL, sealed TEXT NOT NULL,
  updated_at BIGINT NOT NULL, PRIMARY KEY (org_id, route));

CREATE TABLE ledger_orgs (
  org_id                          TEXT PRIMARY KEY,
  cash_micro_usd                  BIGINT NOT NULL DEFAULT 0,
  credit_micro_usd                BIGINT NOT NULL DEFAULT 0 CHECK (credit_micro_usd >= 0),
  exempt                          BOOLEAN NOT NULL DEFAULT false,
  first_topup_at_ms               BIGINT,
  override_concurrency            BIGINT,
  override_daily_spend_micro_usd  BIGINT,
  paused_reason                   TEXT,
  paused_at_ms                    BIGINT,
  paused_day                      INTEGER,
  paused_daily_limit_micro_usd    BIGINT,
  created_at_ms                   BIGINT NOT NULL
);
CREATE TABLE ledger_holds (
  hold_id              TEXT PRIMARY KEY,
  org_id               TEXT NOT NULL,
  amount_micro_usd     BIGINT NOT NULL,
  created_at_ms        BIGINT NOT NULL,
  lease_expires_at_ms  BIGINT NOT NULL,
  day                  INTEGER NOT NULL,
  expired_at_ms        BIGINT,
  instance_id          TEXT,
  process_id           TEXT,
  delivered_micro_usd  BIGINT NOT NULL DEFAULT 0,  -- output delivered by the last renewal: what a lapse charges
  charged_micro_usd    BIGINT NOT NULL DEFAULT 0   -- what the lapse charged (a late settle charges the rest)
);
CREATE INDEX ledger_holds_live_instance ON ledger_holds (instance_id) WHERE expired_at_ms IS NULL;
CREATE INDEX ledger_holds_live_org ON ledger_holds (org_id) WHERE expired_at_ms IS NULL;
CREATE INDEX ledger_holds_live_lease ON ledger_holds (lease_expires_at_ms) WHERE expired_at_ms IS NULL;
CREATE INDEX ledger_holds_expired ON ledger_holds (expired_at_ms) WHERE expired_at_ms IS NOT NULL;
CREATE TABLE ledger_daily_spend (
  org_id TEXT NOT NULL, day INTEGER NOT NULL, spent_micro_usd BIGINT NOT NULL, PRIMARY KEY (org_id, day));
CREATE TABLE ledger_pool_windows (pool TEXT PRIMARY KEY, window_start_ms BIGINT NOT NULL, admitted BIGINT NOT NULL);
CREATE TABLE ledger_entries (
  id BIGSERIAL PRIMARY KEY, org_id TEXT NOT NULL, at_ms BIGINT NOT NULL, kind TEXT NOT NULL, hold_id TEXT,
  amount_micro_usd BIGINT, cash_micro_usd BIGINT, credit_micro_usd BIGINT, reason TEXT, detail TEXT);
CREATE INDEX ledger_entries_org ON ledger_entries (org_id, id);

-- Flex race slots of own-key requests, counted across processes; a slot of a dead process lapses.
CREATE TABLE flex_race_slots (
  slot_id BIGSERIAL PRIMARY KEY, org_id TEXT NOT NULL, process_id TEXT NOT NULL, lease_expires_at_ms BIGINT NOT NULL);
CREATE INDEX flex_race_slots_org ON flex_race_slots (org_id);
CREATE INDEX flex_race_slots_process ON flex_race_slots (process_id);
`;

// Releases one live hold of a process that is gone, charging what its last renewal recorded
// (cash first, then credit; rules.ts debit), under the organization's row lock. NULL when the hold
// was no longer live (another sweeper, or its settlement, came first). As version 1 made them;
// version 6 replaced ledger_release_hold (RELEASE_HOLD below: it re-checks the lease), and a start
// now releases through ledger_release_processes (only processes found gone), not
// ledger_release_instance, which an earlier build may still call.
const V1_RELEASE = `
CREATE FUNCTION ledger_release_hold(p_hold_id TEXT, p_now BIGINT) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
  v_org TEXT; v_amount BIGINT; v_charge BIGINT; v_cash BIGINT; v_credit BIGINT;
  v_from_cash BIGINT; v_from_credit BIGINT; v_new_cash BIGINT; v_new_credit BIGINT;
BEGIN
  SELECT org_id INTO v_org FROM ledger_holds WHERE hold_id = p_hold_id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  SELECT cash_micro_usd, credit_micro_usd INTO v_cash, v_credit FROM ledger_orgs WHERE org_id = v_org FOR UPDATE;
  UPDATE ledger_holds SET expired_at_ms = p_now, charged_micro_usd = delivered_micro_usd
    WHERE hold_id = p_hold_id AND expired_at_ms IS NULL
    RETURNING amount_micro_usd, delivered_micro_usd INTO v_amount, v_charge;
  IF NOT FOUND THEN RETURN NULL; END IF;
  v_from_cash := LEAST(GREATEST(v_cash, 0), v_charge);
  v_from_credit := LEAST(v_credit, v_charge - v_from_cash);
  v_new_cash := v_cash - v_from_cash - (v_charge - v_from_cash - v_from_credit);
  v_new_credit := v_credit - v_from_credit;
  IF v_charge > 0 THEN
    UPDATE ledger_orgs SET cash_micro_usd = v_new_cash, credit_micro_usd = v_new_credit WHERE org_id = v_org;
    INSERT INTO ledger_daily_spend (org_id, day, spent_micro_usd) VALUES (v_org, (p_now / 86400000)::INTEGER, v_charge)
      ON CONFLICT (org_id, day) DO UPDATE SET spent_micro_usd = ledger_daily_spend.spent_micro_usd + EXCLUDED.spent_micro_usd;
  END IF;
  INSERT INTO ledger_entries (org_id, at_ms, kind, hold_id, amount_micro_usd, cash_micro_usd, credit_micro_usd, detail)
    VALUES (v_org, p_now, 'lease_expired', p_hold_id, v_amount, v_new_cash - v_cash, v_new_credit - v_credit,
            json_build_object('charged_micro_usd', v_charge)::TEXT);
  RETURN v_charge;
END $$;

CREATE FUNCTION ledger_release_instance(p_instance TEXT, p_process TEXT, p_now BIGINT)
  RETURNS TABLE (hold_id TEXT, org_id TEXT, amount_micro_usd BIGINT, charged_micro_usd BIGINT)
LANGUAGE plpgsql AS $$
DECLARE h RECORD; v_charged BIGINT;
BEGIN
  FOR h IN SELECT x.hold_id, x.org_id, x.amount_micro_usd FROM ledger_holds x
           WHERE x.instance_id = p_instance AND x.process_id <> p_process AND x.expired_at_ms IS NULL
           ORDER BY x.org_id LOOP
    v_charged := ledger_release_hold(h.hold_id, p_now);
    IF v_charged IS NOT NULL THEN
      hold_id := h.hold_id; org_id := h.org_id; amount_micro_usd := h.amount_micro_usd; charged_micro_usd := v_charged;
      RETURN NEXT;
    END IF;
  END LOOP;
END $$;
`;

// pause → balance → daily ceiling (rules.ts pauseDue, which the limits report shows before any
// request is refused) → concurrency → pool → hold, under the organization's row lock
// (every admission and settlement of an org takes it first, so nothing can interleave), then the
// pool rows in their configured order. Returns code 'ok' with the hold placed, or the refusal.
// Its current definition: version 1 created it, version 4 replaced it (a fresh database runs both,
// alike), so one text says what admission does.
const ADMIT = `
CREATE OR REPLACE FUNCTION ledger_admit(
  p_org TEXT, p_hold_id TEXT, p_amount BIGINT, p_now BIGINT, p_lease_ms BIGINT, p_instance TEXT, p_process TEXT,
  p_ramp_weeks INTEGER[], p_ramp_conc BIGINT[], p_ramp_daily BIGINT[],
  p_pools TEXT[], p_pool_limits BIGINT[],
  OUT code TEXT, OUT retry_after_s INTEGER, OUT spend_remaining BIGINT, OUT exempt BOOLEAN)
LANGUAGE plpgsql AS $$
DECLARE
  o ledger_orgs%ROWTYPE;
  v_day INTEGER := (p_now / 86400000)::INTEGER;
  v_window BIGINT := p_now - (p_now % 60000);
  v_in_flight BIGINT; v_held BIGINT; v_settled BIGINT;
  v_week BIGINT; v_conc BIGINT; v_daily BIGINT; v_balance BIGINT; v_used BIGINT;
  v_pause TEXT; v_ws BIGINT; v_admitted BIGINT; i INTEGER; pass INTEGER;
BEGIN
  -- Pass 1 reads without the lock and writes nothing: an org with no stored pause, money and room
  -- under its ceiling but at its concurrency limit is refused there (the figures can only be stale
  -- toward more holds, so this never admits anything). A burst against a full org then neither
  -- queues on its row lock nor commits a write. Every other outcome is decided in pass 2, under
  -- the organization's row lock.
  FOR pass IN 1 .. 2 LOOP
    IF pass = 1 THEN
      SELECT * INTO o FROM ledger_orgs WHERE org_id = p_org;
    ELSE
      SELECT * INTO o FROM ledger_orgs WHERE org_id = p_org FOR UPDATE;
    END IF;
    IF NOT FOUND THEN RAISE EXCEPTION 'ledger: unknown organization "%"', p_org; END IF;
    exempt := o.exempt;

    IF pass = 2 THEN
      -- A hold whose lease ran out belongs to a dead process: release it before counting.
      PERFORM ledger_release_hold(x.hold_id, p_now) FROM ledger_holds x
        WHERE x.org_id = p_org AND x.expired_at_ms IS NULL AND x.lease_expires_at_ms <= p_now;
      SELECT * INTO o FROM ledger_orgs WHERE org_id = p_org;  -- a lapse may have charged it
    END IF;

    -- Every live hold counts against today's ceiling, whatever day it was placed (rules.ts assess).
    SELECT count(*), COALESCE(sum(amount_micro_usd), 0)::BIGINT INTO v_in_flight, v_held
      FROM ledger_holds WHERE org_id = p_org AND expired_at_ms IS NULL AND lease_expires_at_ms > p_now;
    v_settled := COALESCE((SELECT spent_micro_usd FROM ledger_daily_spend WHERE org_id = p_org AND day = v_day), 0);
    v_balance := o.cash_micro_usd + o.credit_micro_usd;
    v_used := v_settled + v_held;

    IF o.exempt THEN
      v_conc := 9007199254740991; v_daily := 9007199254740991;
    ELSE
      IF o.first_topup_at_ms IS NULL THEN v_week := 0;
      ELSIF p_now < o.first_topup_at_ms THEN v_week := 1;
      ELSE v_week := (p_now - o.first_topup_at_ms) / 604800000 + 1;
      END IF;
      v_conc := p_ramp_conc[1]; v_daily := p_ramp_daily[1];
      FOR i IN 1 .. array_length(p_ramp_weeks, 1) LOOP
        IF p_ramp_weeks[i] <= v_week THEN v_conc := p_ramp_conc[i]; v_daily := p_ramp_daily[i]; END IF;
      END LOOP;
      v_conc := COALESCE(o.override_concurrency, v_conc);
      v_daily := COALESCE(o.override_daily_spend_micro_usd, v_daily);
    END IF;

    IF pass = 1 AND o.paused_reason IS NULL AND v_balance > 0 AND NOT o.exempt AND v_used < v_daily AND v_in_flight >= v_conc THEN
      code := 'rate_limit_exceeded'; retry_after_s := 1; RETURN;
    END IF;
  END LOOP;

  -- The stored pause, unless its own lifting condition now holds (rules.ts pauseInForce).
  v_pause := o.paused_reason;
  IF v_pause = 'insufficient_balance' AND v_balance > 0 THEN
    v_pause := NULL;
  ELSIF v_pause = 'spend_velocity_exceeded' THEN
    IF o.exempt OR o.paused_day IS DISTINCT FROM v_day THEN
      v_pause := NULL;
    ELSIF (o.paused_daily_limit_micro_usd IS NULL OR v_daily > o.paused_daily_limit_micro_usd) AND v_daily > v_used THEN
      v_pause := NULL;
    END IF;
  END IF;
  IF o.paused_reason IS NOT NULL AND v_pause IS NULL THEN
    UPDATE ledger_orgs SET paused_reason = NULL, paused_at_ms = NULL, paused_day = NULL, paused_daily_limit_micro_usd = NULL
      WHERE org_id = p_org;
    INSERT INTO ledger_entries (org_id, at_ms, kind, reason) VALUES (p_org, p_now, 'unpause', o.paused_reason);
  END IF;
  IF v_pause IS NOT NULL THEN code := v_pause; RETURN; END IF;

  IF v_balance <= 0 THEN
    UPDATE ledger_orgs SET paused_reason = 'insufficient_balance', paused_at_ms = p_now, paused_day = NULL,
      paused_daily_limit_micro_usd = NULL WHERE org_id = p_org;
    INSERT INTO ledger_entries (org_id, at_ms, kind, reason) VALUES (p_org, p_now, 'pause', 'insufficient_balance');
    code := 'insufficient_balance'; RETURN;
  END IF;
  IF NOT o.exempt THEN
    IF v_used >= v_daily THEN
      UPDATE ledger_orgs SET paused_reason = 'spend_velocity_exceeded', paused_at_ms = p_now, paused_day = v_day,
        paused_daily_limit_micro_usd = v_daily WHERE org_id = p_org;
      INSERT INTO ledger_entries (org_id, at_ms, kind, reason) VALUES (p_org, p_now, 'pause', 'spend_velocity_exceeded');
      code := 'spend_velocity_exceeded'; RETURN;
    END IF;
    IF v_in_flight >= v_conc THEN code := 'rate_limit_exceeded'; retry_after_s := 1; RETURN; END IF;
  END IF;

  FOR i IN 1 .. COALESCE(array_length(p_pools, 1), 0) LOOP
    INSERT INTO ledger_pool_windows (pool, window_start_ms, admitted) VALUES (p_pools[i], v_window, 0)
      ON CONFLICT (pool) DO NOTHING;
    SELECT window_start_ms, admitted INTO v_ws, v_admitted FROM ledger_pool_windows WHERE pool = p_pools[i] FOR UPDATE;
    IF v_ws <> v_window THEN v_admitted := 0; END IF;
    IF v_admitted >= p_pool_limits[i] THEN
      retry_after_s := GREATEST(COALESCE(retry_after_s, 0), GREATEST(1, CEIL((v_window + 60000 - p_now) / 1000.0)::INTEGER));
    END IF;
  END LOOP;
  IF retry_after_s IS NOT NULL THEN code := 'rate_limit_exceeded'; RETURN; END IF;

  INSERT INTO ledger_holds (hold_id, org_id, amount_micro_usd, created_at_ms, lease_expires_at_ms, day, instance_id, process_id)
    VALUES (p_hold_id, p_org, p_amount, p_now, p_now + p_lease_ms, v_day, p_instance, p_process);
  UPDATE ledger_pool_windows
    SET admitted = CASE WHEN window_start_ms = v_window THEN admitted + 1 ELSE 1 END, window_start_ms = v_window
    WHERE pool = ANY (p_pools);
  code := 'ok';
  spend_remaining := CASE WHEN o.exempt THEN v_balance ELSE LEAST(v_balance, v_daily - v_used) END;
END $$;
`;

// Debit the real cost (cash first, then credit; rules.ts debit), add it to today's spend, release
// the hold. The org row is locked before the hold, in the same order as admission. Idempotent.
// As version 1 made it; version 6 replaced it (SETTLE below: a late settlement's real cost is final).
const V1_SETTLE = `
CREATE FUNCTION ledger_settle(p_hold_id TEXT, p_cost BIGINT, p_now BIGINT) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  v_org TEXT; v_expired BIGINT; v_charged BIGINT; v_cost BIGINT; v_cash BIGINT; v_credit BIGINT;
  v_from_cash BIGINT; v_from_credit BIGINT; v_new_cash BIGINT; v_new_credit BIGINT;
BEGIN
  SELECT org_id INTO v_org FROM ledger_holds WHERE hold_id = p_hold_id;
  IF NOT FOUND THEN RETURN; END IF;
  SELECT cash_micro_usd, credit_micro_usd INTO v_cash, v_credit FROM ledger_orgs WHERE org_id = v_org FOR UPDATE;
  DELETE FROM ledger_holds WHERE hold_id = p_hold_id RETURNING expired_at_ms, charged_micro_usd INTO v_expired, v_charged;
  IF NOT FOUND THEN RETURN; END IF; -- settled by another process meanwhile
  -- A late settlement of a lapsed hold charges only what the lapse did not (never twice).
  v_cost := CASE WHEN v_expired IS NULL THEN p_cost ELSE GREATEST(0, p_cost - v_charged) END;
  v_from_cash := LEAST(GREATEST(v_cash, 0), v_cost);
  v_from_credit := LEAST(v_credit, v_cost - v_from_cash);
  v_new_cash := v_cash - v_from_cash - (v_cost - v_from_cash - v_from_credit);
  v_new_credit := v_credit - v_from_credit;
  UPDATE ledger_orgs SET cash_micro_usd = v_new_cash, credit_micro_usd = v_new_credit WHERE org_id = v_org;
  IF v_cost > 0 THEN
    INSERT INTO ledger_daily_spend (org_id, day, spent_micro_usd) VALUES (v_org, (p_now / 86400000)::INTEGER, v_cost)
      ON CONFLICT (org_id, day) DO UPDATE SET spent_micro_usd = ledger_daily_spend.spent_micro_usd + EXCLUDED.spent_micro_usd;
  END IF;
  INSERT INTO ledger_entries (org_id, at_ms, kind, hold_id, amount_micro_usd, cash_micro_usd, credit_micro_usd)
    VALUES (v_org, p_now, CASE WHEN v_expired IS NULL THEN 'settle' ELSE 'settle_after_expiry' END, p_hold_id, v_cost,
            v_new_cash - v_cash, v_new_credit - v_credit);
END $$;
`;

// One sweeper at a time across processes (a transaction-scoped advisory lock; a process that does
// not get it skips this round). Releases lapsed holds, forgets old expired ones.
const V1_EXPIRE = `
CREATE FUNCTION ledger_expire(p_now BIGINT, p_forget_before BIGINT)
  RETURNS TABLE (hold_id TEXT, org_id TEXT, amount_micro_usd BIGINT, charged_micro_usd BIGINT)
LANGUAGE plpgsql AS $$
DECLARE h RECORD; v_charged BIGINT;
BEGIN
  IF NOT pg_try_advisory_xact_lock(7215340001) THEN RETURN; END IF;
  FOR h IN SELECT x.hold_id, x.org_id, x.amount_micro_usd FROM ledger_holds x
           WHERE x.expired_at_ms IS NULL AND x.lease_expires_at_ms <= p_now ORDER BY x.org_id LOOP
    v_charged := ledger_release_hold(h.hold_id, p_now);
    IF v_charged IS NOT NULL THEN
      hold_id := h.hold_id; org_id := h.org_id; amount_micro_usd := h.amount_micro_usd; charged_micro_usd := v_charged;
      RETURN NEXT;
    END IF;
  END LOOP;
  DELETE FROM ledger_holds x WHERE x.expired_at_ms IS NOT NULL AND x.expired_at_ms < p_forget_before;
  DELETE FROM flex_race_slots s WHERE s.lease_expires_at_ms <= p_now;
END $$;
`;

// At most `limit` live slots per org across processes: the org's slots are counted under a
// transaction-scoped advisory lock on the org, so two processes cannot both take the last one.
const V1_FLEX = `
CREATE FUNCTION flex_slot_acquire(p_org TEXT, p_limit INTEGER, p_process TEXT, p_now BIGINT, p_lease_ms BIGINT)
  RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('flex_race_slots:' || p_org, 0));
  IF (SELECT count(*) FROM flex_race_slots WHERE org_id = p_org AND lease_expires_at_ms > p_now) >= p_limit THEN
    RETURN false;
  END IF;
  INSERT INTO flex_race_slots (org_id, process_id, lease_expires_at_ms) VALUES (p_org, p_process, p_now + p_lease_ms);
  RETURN true;
END $$;
`;

// Group commit: the admissions (or settlements) a process gathered while its previous batch was
// in flight go in one statement, one transaction, one WAL flush, instead of one each
// (lib/ledger/postgres.ts). Each element runs the single function above, in order, so it sees the
// writes of those before it and admission stays atomic. Locks are taken up front in one global
// order, every organization of the batch by org_id and then every shared pool of the batch in
// configuration order (`p_lock_pools`), so two batches, a batch and a lone call (its one
// organization, then its route's pools in configuration order) or a batch and a sweep (which
// takes organizations in org_id order) never wait on each other in a cycle. So a batch queues on
// a full organization's row lock, which the unlocked first pass of ledger_admit spares a lone
// call; the batch pays that once for all its calls. A batch whose element throws fails whole;
// the caller then runs its elements one by one (each through the single function), so only that
// element fails.
const V3_BATCHES = `
CREATE FUNCTION ledger_admit_many(
  p_items JSONB, p_lock_pools TEXT[], p_lease_ms BIGINT, p_instance TEXT, p_process TEXT,
  p_ramp_weeks INTEGER[], p_ramp_conc BIGINT[], p_ramp_daily BIGINT[])
  RETURNS TABLE (code TEXT, retry_after_s INTEGER, spend_remaining BIGINT, exempt BOOLEAN)
LANGUAGE plpgsql AS $$
DECLARE e RECORD; r RECORD;
BEGIN
  PERFORM 1 FROM ledger_orgs o
    WHERE o.org_id IN (SELECT x.org FROM jsonb_to_recordset(p_items) AS x(org TEXT)) ORDER BY o.org_id FOR UPDATE;
  INSERT INTO ledger_pool_windows (pool, window_start_ms, admitted)
    SELECT l.pool, 0, 0 FROM unnest(p_lock_pools) WITH ORDINALITY AS l(pool, n) ORDER BY l.n ON CONFLICT (pool) DO NOTHING;
  PERFORM 1 FROM ledger_pool_windows w JOIN unnest(p_lock_pools) WITH ORDINALITY AS l(pool, n) ON w.pool = l.pool
    ORDER BY l.n FOR UPDATE OF w;
  FOR e IN SELECT * FROM ROWS FROM (jsonb_to_recordset(p_items)
               AS (org TEXT, hold TEXT, amount BIGINT, now BIGINT, pools TEXT[], limits BIGINT[])) WITH ORDINALITY AS x
             ORDER BY x.ordinality LOOP
    SELECT * INTO r FROM ledger_admit(e.org, e.hold, e.amount, e.now, p_lease_ms, p_instance, p_process,
      p_ramp_weeks, p_ramp_conc, p_ramp_daily, e.pools, e.limits);
    code := r.code; retry_after_s := r.retry_after_s; spend_remaining := r.spend_remaining; exempt := r.exempt;
    RETURN NEXT;
  END LOOP;
END $$;

CREATE FUNCTION ledger_settle_many(p_hold_ids TEXT[], p_costs BIGINT[], p_nows BIGINT[]) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE i INTEGER;
BEGIN
  PERFORM 1 FROM ledger_orgs o
    WHERE o.org_id IN (SELECT h.org_id FROM ledger_holds h WHERE h.hold_id = ANY (p_hold_ids)) ORDER BY o.org_id FOR UPDATE;
  FOR i IN 1 .. COALESCE(array_length(p_hold_ids, 1), 0) LOOP
    PERFORM ledger_settle(p_hold_ids[i], p_costs[i], p_nows[i]);
  END LOOP;
END $$;
`;

// Which processes placed holds (lib/ledger/liveness.ts): one row per process with where it runs
// and a heartbeat refreshed with its lease renewals, so that a process starting under an instance
// id releases at once only the holds of earlier processes that are provably gone. And what a
// lapse took from credit, which a late settlement below the lapse charge gives back as credit.
// Idempotent, as every migration here.
const V6_TABLES = `
CREATE TABLE IF NOT EXISTS ledger_processes (
  process_id       TEXT PRIMARY KEY,
  instance_id      TEXT NOT NULL,
  host             TEXT NOT NULL,
  pid              INTEGER NOT NULL,
  heartbeat_at_ms  BIGINT NOT NULL
);
ALTER TABLE ledger_holds ADD COLUMN IF NOT EXISTS charged_credit_micro_usd BIGINT NOT NULL DEFAULT 0;
`;

// Releases one live hold, charging what its last renewal recorded (cash first, then credit;
// rules.ts debit), under the organization's row lock; NULL when it was not released. The lease is
// checked again here, under that lock and on the row's latest version: a sweep or an admission
// picks its lapsed holds before it waits for the lock, and the owner's renewal (which takes no
// organization lock) may extend the lease meanwhile; such a hold is live and stays. Only the
// release of a process known to be gone (ledger_release_processes) passes p_lapsed_only = false.
// The two-argument form, which ledger_admit and ledger_expire call, releases only lapsed holds.
const RELEASE_HOLD = `
CREATE OR REPLACE FUNCTION ledger_release_hold(p_hold_id TEXT, p_now BIGINT, p_lapsed_only BOOLEAN) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
  v_org TEXT; v_amount BIGINT; v_charge BIGINT; v_cash BIGINT; v_credit BIGINT;
  v_from_cash BIGINT; v_from_credit BIGINT; v_new_cash BIGINT; v_new_credit BIGINT;
BEGIN
  SELECT org_id INTO v_org FROM ledger_holds WHERE hold_id = p_hold_id;
  IF NOT FOUND THEN RETURN NULL; END IF;
  SELECT cash_micro_usd, credit_micro_usd INTO v_cash, v_credit FROM ledger_orgs WHERE org_id = v_org FOR UPDATE;
  UPDATE ledger_holds SET expired_at_ms = p_now, charged_micro_usd = delivered_micro_usd,
      charged_credit_micro_usd = LEAST(v_credit, delivered_micro_usd - LEAST(GREATEST(v_cash, 0), delivered_micro_usd))
    WHERE hold_id = p_hold_id AND expired_at_ms IS NULL AND (NOT p_lapsed_only OR lease_expires_at_ms <= p_now)
    RETURNING amount_micro_usd, delivered_micro_usd INTO v_amount, v_charge;
  IF NOT FOUND THEN RETURN NULL; END IF;
  v_from_cash := LEAST(GREATEST(v_cash, 0), v_charge);
  v_from_credit := LEAST(v_credit, v_charge - v_from_cash);
  v_new_cash := v_cash - v_from_cash - (v_charge - v_from_cash - v_from_credit);
  v_new_credit := v_credit - v_from_credit;
  IF v_charge > 0 THEN
    UPDATE ledger_orgs SET cash_micro_usd = v_new_cash, credit_micro_usd = v_new_credit WHERE org_id = v_org;
    INSERT INTO ledger_daily_spend (org_id, day, spent_micro_usd) VALUES (v_org, (p_now / 86400000)::INTEGER, v_charge)
      ON CONFLICT (org_id, day) DO UPDATE SET spent_micro_usd = ledger_daily_spend.spent_micro_usd + EXCLUDED.spent_micro_usd;
  END IF;
  INSERT INTO ledger_entries (org_id, at_ms, kind, hold_id, amount_micro_usd, cash_micro_usd, credit_micro_usd, detail)
    VALUES (v_org, p_now, 'lease_expired', p_hold_id, v_amount, v_new_cash - v_cash, v_new_credit - v_credit,
            json_build_object('charged_micro_usd', v_charge)::TEXT);
  RETURN v_charge;
END $$;

CREATE OR REPLACE FUNCTION ledger_release_hold(p_hold_id TEXT, p_now BIGINT) RETURNS BIGINT
LANGUAGE sql AS $$ SELECT ledger_release_hold(p_hold_id, p_now, true) $$;

-- At start: the live holds of this instance's earlier processes that the caller found gone
-- (liveness.ts), released without waiting for their leases. In org_id order, as sweeps and batches
-- take organizations.
CREATE OR REPLACE FUNCTION ledger_release_processes(p_instance TEXT, p_processes TEXT[], p_now BIGINT)
  RETURNS TABLE (hold_id TEXT, org_id TEXT, amount_micro_usd BIGINT, charged_micro_usd BIGINT)
LANGUAGE plpgsql AS $$
DECLARE h RECORD; v_charged BIGINT;
BEGIN
  FOR h IN SELECT x.hold_id, x.org_id, x.amount_micro_usd FROM ledger_holds x
           WHERE x.instance_id = p_instance AND x.process_id = ANY (p_processes) AND x.expired_at_ms IS NULL
           ORDER BY x.org_id LOOP
    v_charged := ledger_release_hold(h.hold_id, p_now, false);
    IF v_charged IS NOT NULL THEN
      hold_id := h.hold_id; org_id := h.org_id; amount_micro_usd := h.amount_micro_usd; charged_micro_usd := v_charged;
      RETURN NEXT;
    END IF;
  END LOOP;
END $$;
`;

// Debit the real cost (cash first, then credit; rules.ts debit), add it to today's spend, release
// the hold. The org row is locked before the hold, in the same order as admission. Idempotent.
// A hold a lapse already released (a slow, not dead, owner): the real cost replaces the lapse
// charge (rules.ts lateSettlement): the difference is charged, or given back in the reverse of
// debit's order (what is owed on cash, then what the lapse took from credit, then cash); the cost
// counts on the day the request ended and the lapse charge leaves the day it was counted on.
const SETTLE = `
CREATE OR REPLACE FUNCTION ledger_settle(p_hold_id TEXT, p_cost BIGINT, p_now BIGINT) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  v_org TEXT; v_expired BIGINT; v_charged BIGINT; v_charged_credit BIGINT; v_cost BIGINT; v_cash BIGINT; v_credit BIGINT;
  v_from_cash BIGINT; v_from_credit BIGINT; v_new_cash BIGINT; v_new_credit BIGINT; v_back BIGINT; v_owed BIGINT;
BEGIN
  SELECT org_id INTO v_org FROM ledger_holds WHERE hold_id = p_hold_id;
  IF NOT FOUND THEN RETURN; END IF;
  SELECT cash_micro_usd, credit_micro_usd INTO v_cash, v_credit FROM ledger_orgs WHERE org_id = v_org FOR UPDATE;
  DELETE FROM ledger_holds WHERE hold_id = p_hold_id
    RETURNING expired_at_ms, charged_micro_usd, charged_credit_micro_usd INTO v_expired, v_charged, v_charged_credit;
  IF NOT FOUND THEN RETURN; END IF; -- settled by another process meanwhile
  v_cost := CASE WHEN v_expired IS NULL THEN p_cost ELSE p_cost - v_charged END;
  IF v_cost >= 0 THEN
    v_from_cash := LEAST(GREATEST(v_cash, 0), v_cost);
    v_from_credit := LEAST(v_credit, v_cost - v_from_cash);
    v_new_cash := v_cash - v_from_cash - (v_cost - v_from_cash - v_from_credit);
    v_new_credit := v_credit - v_from_credit;
  ELSE
    v_back := -v_cost;
    v_owed := LEAST(v_back, GREATEST(-v_cash, 0));
    v_from_credit := LEAST(v_back - v_owed, v_charged_credit);
    v_new_cash := v_cash + v_back - v_from_credit;
    v_new_credit := v_credit + v_from_credit;
  END IF;
  UPDATE ledger_orgs SET cash_micro_usd = v_new_cash, credit_micro_usd = v_new_credit WHERE org_id = v_org;
  IF v_expired IS NOT NULL AND v_charged > 0 THEN
    UPDATE ledger_daily_spend SET spent_micro_usd = spent_micro_usd - v_charged
      WHERE org_id = v_org AND day = (v_expired / 86400000)::INTEGER;
  END IF;
  IF p_cost > 0 THEN
    INSERT INTO ledger_daily_spend (org_id, day, spent_micro_usd) VALUES (v_org, (p_now / 86400000)::INTEGER, p_cost)
      ON CONFLICT (org_id, day) DO UPDATE SET spent_micro_usd = ledger_daily_spend.spent_micro_usd + EXCLUDED.spent_micro_usd;
  END IF;
  INSERT INTO ledger_entries (org_id, at_ms, kind, hold_id, amount_micro_usd, cash_micro_usd, credit_micro_usd, detail)
    VALUES (v_org, p_now, CASE WHEN v_expired IS NULL THEN 'settle' ELSE 'settle_after_expiry' END, p_hold_id, v_cost,
            v_new_cash - v_cash, v_new_credit - v_credit,
            CASE WHEN v_expired IS NULL THEN NULL ELSE json_build_object('cost_micro_usd', p_cost)::TEXT END);
END $$;
`;

// Flex race slots named by a key the acquiring process chooses (postgres-flex-slots.ts), so that
// it renews exactly the slots it holds and can delete one whose acquisition's answer it lost.
// Rows of processes still running the version 1 function carry no key and keep working as before.
// Idempotent, as every migration here.
const V7_FLEX_KEYS = `
ALTER TABLE flex_race_slots ADD COLUMN IF NOT EXISTS slot_key TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS flex_race_slots_key ON flex_race_slots (slot_key);

CREATE OR REPLACE FUNCTION flex_slot_take(p_org TEXT, p_limit INTEGER, p_process TEXT, p_now BIGINT, p_lease_ms BIGINT, p_key TEXT)
  RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('flex_race_slots:' || p_org, 0));
  IF (SELECT count(*) FROM flex_race_slots WHERE org_id = p_org AND lease_expires_at_ms > p_now) >= p_limit THEN
    RETURN false;
  END IF;
  INSERT INTO flex_race_slots (org_id, process_id, lease_expires_at_ms, slot_key) VALUES (p_org, p_process, p_now + p_lease_ms, p_key);
  RETURN true;
END $$;
`;

const V8_IDEMPOTENCY = `
ALTER TABLE ledger_entries ADD COLUMN IF NOT EXISTS idempotency_key TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS ledger_entries_idempotency ON ledger_entries (org_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
`;

// Each process publishes the fingerprint of the secret it seals provider keys with, and says when it
// stopped, so that a reseal is refused while a running process seals with another secret
// (lib/ledger/liveness.ts sealPeers). Rows of processes of earlier builds have no fingerprint.
const V11_SEAL_FINGERPRINTS = `
ALTER TABLE ledger_processes ADD COLUMN IF NOT EXISTS seal_fingerprint TEXT;
ALTER TABLE ledger_processes ADD COLUMN IF NOT EXISTS stopped BOOLEAN NOT NULL DEFAULT false;
`;

export const MIGRATIONS: Migration[] = [
  { version: 1, name: 'orgs, keys, ledger, flex race slots', sql: V1_TABLES + V1_RELEASE + ADMIT + V1_SETTLE + V1_EXPIRE + V1_FLEX },
  // Usage records shared by every process (issue 10; lib/usage/postgres.ts).
  { version: 2, name: 'usage records', sql: USAGE_DDL },
  { version: 3, name: 'ledger group commit: admissions and settlements in batches', sql: V3_BATCHES },
  // A hold placed before UTC midnight and still live counts against the new day's ceiling.
  { version: 4, name: 'daily ceiling: every live hold counts against today', sql: ADMIT },
  // Which org each provider-held id issued on a managed route belongs to (lib/store/state-owners.ts).
  { version: 5, name: 'provider state owners', sql: STATE_OWNERS_DDL },
  // A start releases only the holds of its instance's processes that are provably gone; a release
  // re-checks the lease under the org lock; a late settlement's real cost is final.
  { version: 6, name: 'ledger: process heartbeats, lease re-checked at release, late settlement at the real cost', sql: V6_TABLES + RELEASE_HOLD + SETTLE },
  // A process renews only the flex slots it holds; a release the database did not take lapses.
  { version: 7, name: 'flex race slots named by the acquiring process', sql: V7_FLEX_KEYS },
  // A top-up's idempotency key, unique per organization (lib/ledger/sqlite-schema.ts DDL_V5).
  { version: 8, name: 'idempotent top-ups', sql: V8_IDEMPOTENCY },
  // GET /admin/v1/orgs reads a page at a time in (created_at, id) order.
  { version: 9, name: 'organizations by creation', sql: 'CREATE INDEX IF NOT EXISTS orgs_by_creation ON orgs (created_at, id);' },
  // An agent key's route chain for requests that name none (README "Agent keys").
  { version: 10, name: 'agent keys: default route chain', sql: 'ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS default_provider TEXT;' },
  // Which secret each process seals with; a reseal waits for them all to agree.
  { version: 11, name: 'processes publish their sealing secret fingerprint', sql: V11_SEAL_FINGERPRINTS },
];

/** The advisory lock key that serializes migrations across processes starting at once. */
export const MIGRATION_LOCK = 7215340000;
