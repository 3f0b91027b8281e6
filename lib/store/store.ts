// One store interface, two adapters (design.md "Ledger storage"): organizations, API keys, provider
// keys, the ledger and flex race slots. Without GATEWAY_DATABASE_URL the embedded SQLite file in
// the data folder; with `postgres://…` the shared PostgreSQL database, for several gateways.
import type pg from 'pg';
import type { Clock } from '../clock.ts';
import type { GatewayConfig } from '../config.ts';
import type { Logger } from '../log.ts';
import type { HoldOwner, Ledger } from '../ledger/types.ts';
import { openSqliteLedger } from '../ledger/sqlite.ts';
import { loggedSettleReports } from '../ledger/settle-retry.ts';
import { FlexSlots, type FlexSlotCounter } from '../routing/flex-slots.ts';
import { openDatabase, type DB } from './db.ts';
import { OrgStore } from './orgs.ts';
import { secretBoxFor } from './secrets.ts';
import { sqliteOrgRows } from './sqlite-orgs.ts';
import { StateOwners } from './state-owners.ts';
import { sqliteStateOwnerRows } from './sqlite-state-owners.ts';

export interface Store {
  kind: 'sqlite' | 'postgres';
  /** The SQLite file and connection (embedded adapter only). */
  file?: string;
  sqlite?: DB;
  /** The shared database's connection pool (PostgreSQL adapter only; the usage store writes through it). */
  pool?: pg.Pool;
  orgs: OrgStore;
  ledger: Ledger;
  flexSlots: FlexSlotCounter;
  /** Which org each provider-held id issued on a managed route belongs to. */
  stateOwners: StateOwners;
  /** Whether the database answers now (`/readyz`). */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** Whose holds these are (instance stable across restarts, process new at each start). */
  owner: HoldOwner;
  /** `postgres://…` selects the shared adapter; undefined the embedded one. */
  databaseUrl?: string;
  dataDir: string;
  secret?: string;
  /** Secrets a rotation moves away from: they still open provider keys, never seal one. */
  previousSecrets?: string[];
  config: GatewayConfig;
  clock: Clock;
  log: Logger;
}

export async function openStore(opts: StoreOptions): Promise<Store> {
  if (opts.databaseUrl) {
    if (!/^postgres(ql)?:\/\//.test(opts.databaseUrl)) throw new Error('GATEWAY_DATABASE_URL must be a postgres:// URL');
    const { openPostgresStore } = await import('./postgres.ts');
    return openPostgresStore({ ...opts, databaseUrl: opts.databaseUrl });
  }
  return openSqliteStore(opts);
}

function openSqliteStore(opts: StoreOptions): Store {
  const db = openDatabase(opts.dataDir);
  const ledger = openSqliteLedger(db, opts.config.ledger, opts.owner, loggedSettleReports(opts.log));
  const stateOwners = new StateOwners(sqliteStateOwnerRows(db), opts.clock, opts.log);
  return {
    kind: 'sqlite',
    file: db.name,
    sqlite: db,
    orgs: new OrgStore(sqliteOrgRows(db), secretBoxFor(opts.dataDir, opts.secret, opts.previousSecrets)),
    ledger,
    flexSlots: new FlexSlots(opts.config.flex_race_slots),
    stateOwners,
    ready: async () => db.open,
    async close() {
      await stateOwners.close();
      await ledger.close();
      db.close();
    },
  };
}
