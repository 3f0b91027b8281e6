// The ledger's tables in the shared SQLite file. Other modules keep their own tables in the same
// file, so every name here starts with `ledger_`. Creation is idempotent and runs in one
// IMMEDIATE transaction, so several processes opening the file at once do not race each other.
import type { Database } from 'better-sqlite3';

export const LEDGER_SCHEMA_VERSION = 6;

const DDL_V1 = `
CREATE TABLE IF NOT EXISTS ledger_orgs (
  org_id                          TEXT PRIMARY KEY,
  cash_micro_usd                  INTEGER NOT NULL DEFAULT 0,
  credit_micro_usd                INTEGER NOT NULL DEFAULT 0 CHECK (credit_micro_usd >= 0),
  exempt                          INTEGER NOT NULL DEFAULT 0,
  first_topup_at_ms               INTEGER,
  override_concurrency            INTEGER,
  override_daily_spend_micro_usd  INTEGER,
  paused_reason                   TEXT,
  paused_at_ms                    INTEGER,
  paused_day                      INTEGER,
  paused_daily_limit_micro_usd    INTEGER,
  created_at_ms                   INTEGER NOT NULL
) STRICT;

-- A hold is live while expired_at_ms IS NULL and its lease has not run out. An expired hold is
-- kept (marked) for a while so that a late settle from a slow, not dead, process still charges.
CREATE TABLE IF NOT EXISTS ledger_holds (
  hold_id              TEXT PRIMARY KEY,
  org_id               TEXT NOT NULL,
  amount_micro_usd     INTEGER NOT NULL,
  created_at_ms        INTEGER NOT NULL,
  lease_expires_at_ms  INTEGER NOT NULL,
  day                  INTEGER NOT NULL,
  expired_at_ms        INTEGER
) STRICT;
CREATE INDEX IF NOT EXISTS ledger_holds_live_org ON ledger_holds (org_id) WHERE expired_at_ms IS NULL;
CREATE INDEX IF NOT EXISTS ledger_holds_live_lease ON ledger_holds (lease_expires_at_ms) WHERE expired_at_ms IS NULL;
CREATE INDEX IF NOT EXISTS ledger_holds_expired ON ledger_holds (expired_at_ms) WHERE expired_at_ms IS NOT NULL;

CREATE TABLE IF NOT EXISTS ledger_daily_spend (
  org_id           TEXT NOT NULL,
  day              INTEGER NOT NULL,
  spent_micro_usd  INTEGER NOT NULL,
  PRIMARY KEY (org_id, day)
) STRICT, WITHOUT ROWID;

-- Shared pools count admissions of all organizations in fixed 60 s windows.
CREATE TABLE IF NOT EXISTS ledger_pool_windows (
  pool             TEXT PRIMARY KEY,
  window_start_ms  INTEGER NOT NULL,
  admitted         INTEGER NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS ledger_entries (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id            TEXT NOT NULL,
  at_ms             INTEGER NOT NULL,
  kind              TEXT NOT NULL,
  hold_id           TEXT,
  amount_micro_usd  INTEGER,
  cash_micro_usd    INTEGER,
  credit_micro_usd  INTEGER,
  reason            TEXT,
  detail            TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS ledger_entries_org ON ledger_entries (org_id, id);
`;

const DDL_V2 = `
ALTER TABLE ledger_holds ADD COLUMN instance_id TEXT;
ALTER TABLE ledger_holds ADD COLUMN process_id TEXT;
ALTER TABLE ledger_holds ADD COLUMN delivered_micro_usd INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger_holds ADD COLUMN charged_micro_usd INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS ledger_holds_live_instance ON ledger_holds (instance_id) WHERE expired_at_ms IS NULL;
`;

// The live holds' count and sum per organization and UTC day of placement, kept by triggers so
// they move with every insert, settlement and expiry of a hold whoever writes it (an older
// process on the same file included) and can never drift from the rows. Admission reads one or
// two rows here instead of aggregating every live hold of the organization, which cost
// O(in flight) per request (13 us at 100 in flight; bench/README.md, "The managed ledger").
// A hold whose lease ran out but is not yet marked expired still counts here; readers subtract
// those (few, found by the (org_id, lease) index) where the lease matters.
// The index of the holds by instance goes: only a start reads holds by instance (a predecessor's,
// a scan of a table that holds only live and recently lapsed holds), and keeping it cost every
// admission and settlement 4-6 us (bench/README.md).
const DDL_V3 = `
CREATE TABLE ledger_live_holds (
  org_id              TEXT NOT NULL,
  day                 INTEGER NOT NULL,
  holds               INTEGER NOT NULL,
  reserved_micro_usd  INTEGER NOT NULL,
  PRIMARY KEY (org_id, day)
) STRICT, WITHOUT ROWID;
INSERT INTO ledger_live_holds (org_id, day, holds, reserved_micro_usd)
  SELECT org_id, day, COUNT(*), SUM(amount_micro_usd) FROM ledger_holds WHERE expired_at_ms IS NULL GROUP BY org_id, day;
CREATE TRIGGER ledger_holds_placed AFTER INSERT ON ledger_holds WHEN NEW.expired_at_ms IS NULL BEGIN
  INSERT INTO ledger_live_holds (org_id, day, holds, reserved_micro_usd) VALUES (NEW.org_id, NEW.day, 1, NEW.amount_micro_usd)
  ON CONFLICT (org_id, day) DO UPDATE SET holds = holds + 1, reserved_micro_usd = reserved_micro_usd + excluded.reserved_micro_usd;
END;
CREATE TRIGGER ledger_holds_settled AFTER DELETE ON ledger_holds WHEN OLD.expired_at_ms IS NULL BEGIN
  UPDATE ledger_live_holds SET holds = holds - 1, reserved_micro_usd = reserved_micro_usd - OLD.amount_micro_usd
  WHERE org_id = OLD.org_id AND day = OLD.day;
END;
CREATE TRIGGER ledger_holds_expired AFTER UPDATE OF expired_at_ms ON ledger_holds
WHEN OLD.expired_at_ms IS NULL AND NEW.expired_at_ms IS NOT NULL BEGIN
  UPDATE ledger_live_holds SET holds = holds - 1, reserved_micro_usd = reserved_micro_usd - OLD.amount_micro_usd
  WHERE org_id = OLD.org_id AND day = OLD.day;
END;
DROP INDEX ledger_holds_live_org;
CREATE INDEX ledger_holds_live_org ON ledger_holds (org_id, lease_expires_at_ms) WHERE expired_at_ms IS NULL;
DROP INDEX ledger_holds_live_instance;
`;

// Which processes placed holds, so that a process starting under the same instance id releases
// at once only the holds of one that is provably gone (liveness.ts): one row per process (a new id
// at each start) with where it runs and a heartbeat refreshed with every lease renewal. And what
// a lapse took from credit, so that a late settlement below the lapse charge gives back credit as
// credit (rules.ts lateSettlement).
const DDL_V4 = `
CREATE TABLE ledger_processes (
  process_id       TEXT PRIMARY KEY,
  instance_id      TEXT NOT NULL,
  host             TEXT NOT NULL,
  pid              INTEGER NOT NULL,
  heartbeat_at_ms  INTEGER NOT NULL
) STRICT;
ALTER TABLE ledger_holds ADD COLUMN charged_credit_micro_usd INTEGER NOT NULL DEFAULT 0;
`;

// A top-up may carry the caller's idempotency key: a retried POST (the billing job timed out
// waiting for the answer) finds its entry and credits nothing twice. Unique per organization.
const DDL_V5 = `
ALTER TABLE ledger_entries ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX ledger_entries_idempotency ON ledger_entries (org_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
`;

// The fingerprint of the secret each process seals provider keys with (written at its
// registration) and whether it stopped, so that a reseal is refused while a running process seals
// with another secret (liveness.ts sealPeers). Rows of earlier builds' processes have no fingerprint.
const DDL_V6 = `
ALTER TABLE ledger_processes ADD COLUMN seal_fingerprint TEXT;
ALTER TABLE ledger_processes ADD COLUMN stopped INTEGER NOT NULL DEFAULT 0;
`;

/** Creates or checks the ledger tables; throws on a file written by a newer ledger. */
export function migrateLedger(db: Database): void {
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS ledger_schema_version (version INTEGER NOT NULL) STRICT');
    const row = db.prepare('SELECT MAX(version) AS v FROM ledger_schema_version').get() as { v: number | null };
    const current = row.v ?? 0;
    if (current > LEDGER_SCHEMA_VERSION) {
      throw new Error(`ledger schema version ${current} is newer than this build (${LEDGER_SCHEMA_VERSION})`);
    }
    if (current < 1) {
      db.exec(DDL_V1);
      db.prepare('INSERT INTO ledger_schema_version (version) VALUES (1)').run();
    }
    if (current < 2) {
      // Crash recovery: holds carry their instance and process, the cost of the output delivered
      // by their last renewal (what a lapse charges) and, once expired, what was charged then.
      db.exec(DDL_V2);
      db.prepare('INSERT INTO ledger_schema_version (version) VALUES (2)').run();
    }
    if (current < 3) {
      db.exec(DDL_V3);
      db.prepare('INSERT INTO ledger_schema_version (version) VALUES (3)').run();
    }
    if (current < 4) {
      db.exec(DDL_V4);
      db.prepare('INSERT INTO ledger_schema_version (version) VALUES (4)').run();
    }
    if (current < 5) {
      db.exec(DDL_V5);
      db.prepare('INSERT INTO ledger_schema_version (version) VALUES (5)').run();
    }
    if (current < 6) {
      db.exec(DDL_V6);
      db.prepare('INSERT INTO ledger_schema_version (version) VALUES (6)').run();
    }
  }).immediate();
}
