// The shared PostgreSQL store: a `pg` connection pool, the versioned migrations run at start under
// an advisory lock (several processes starting at once apply each migration exactly once), and a
// LISTEN connection through which a revocation or provider-key change made by any process drops
// the cached lookups of every other one (within milliseconds; the 5 s cache time is the fallback).
import pg from 'pg';
import { openPostgresLedger } from '../ledger/postgres.ts';
import { loggedSettleReports } from '../ledger/settle-retry.ts';
import { OrgStore } from './orgs.ts';
import { SecretBox } from './secrets.ts';
import { CACHE_CHANNEL, postgresOrgRows } from './postgres-orgs.ts';
import { SharedFlexSlots } from './postgres-flex-slots.ts';
import { MIGRATIONS, MIGRATION_LOCK } from './postgres-schema.ts';
import { StateOwners } from './state-owners.ts';
import { postgresStateOwnerRows } from './postgres-state-owners.ts';
import type { Store, StoreOptions } from './store.ts';

/** Money, times and counts are BIGINT; every figure the gateway stores is a safe integer. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => oid === pg.types.builtins.INT8
    ? (text: string) => Number(text)
    : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** How long the client waits for a query's answer before failing it (the caller answers 503). */
export const QUERY_TIMEOUT_MS = 15_000;

/** Connection settings shared by the pool and the listener; the URL (which may carry a password)
 *  is never logged. The client's query_timeout only stops waiting: the statement runs on, and an
 *  admission that waited on a busy organization's row lock past it still placed its hold, which
 *  nobody settled or renewed (it counted against the organization until its lease ran out). So
 *  the server cancels a statement well before the client gives up (statement_timeout, lock waits
 *  included: 12 s of 15 s): a statement the caller saw fail has been rolled back. */
export function clientConfig(url: string, queryTimeoutMs = QUERY_TIMEOUT_MS): pg.ClientConfig {
  return {
    connectionString: url, types, connectionTimeoutMillis: 10_000, application_name: 'gateway',
    query_timeout: queryTimeoutMs, statement_timeout: Math.floor(queryTimeoutMs * 0.8),
  };
}

export async function migrate(pool: pg.Pool): Promise<number> {
  const client = await pool.connect();
  const onError = (): void => {}; // see ledger/postgres.ts withOrg
  client.on('error', onError);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`
      CREATE TABLE IF NOT EXISTS gateway_schema_migrations
        (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const appliedRows = (await client.query<{ version: number }>('SELECT version FROM gateway_schema_migrations')).rows;
    const applied = new Set(appliedRows.map((row) => row.version));
    const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
    const newest = Math.max(0, ...applied);
    if (newest > latest) throw new Error(`database schema version ${newest} is newer than this build (${latest})`);
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO gateway_schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
    }
    return latest;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    client.off('error', onError);
    client.release();
  }
}

export async function openPostgresStore(opts: StoreOptions & { databaseUrl: string }): Promise<Store> {
  // Provider keys sealed by one process must open in every other: the sealing key cannot be a
  // random file in one machine's data folder.
  if (!opts.secret) {
    throw new Error('GATEWAY_SECRET_KEY is required with GATEWAY_DATABASE_URL (every process must seal provider keys alike)');
  }
  const { log } = opts;
  const { processId, instanceId } = opts.owner;
  const pool = new pg.Pool({
    ...clientConfig(opts.databaseUrl), max: Number(process.env.GATEWAY_DATABASE_POOL ?? 10), idleTimeoutMillis: 30_000,
  });
  // An idle connection that breaks (server restarted) must not crash the process.
  pool.on('error', (err) => log.warn({ err: { message: err.message } }, 'database connection lost'));
  // Readiness asks whether the database answers, on a connection of its own: on the shared pool a
  // burst that holds every connection made /readyz wait for one (up to the 10 s connect timeout)
  // and then call a busy but healthy database unreachable.
  const probe = new pg.Pool({ ...clientConfig(opts.databaseUrl, 1_000), max: 1, connectionTimeoutMillis: 1_000, idleTimeoutMillis: 60_000 });
  probe.on('error', () => {}); // a lost idle probe connection is noticed by the next probe
  await migrate(pool);

  const orgs = new OrgStore(postgresOrgRows(pool), new SecretBox(opts.secret, opts.previousSecrets));
  const ledger = openPostgresLedger(pool, opts.config.ledger, { processId, instanceId, ...loggedSettleReports(log) });
  const flexSlots = new SharedFlexSlots(pool, opts.config.flex_race_slots, processId, opts.clock,
    (err) => log.warn({ err: { message: (err as Error).message } }, 'flex race slots: database unreachable'));
  const stateOwners = new StateOwners(postgresStateOwnerRows(pool), opts.clock, log);
  const listener = listen(opts.databaseUrl, orgs, log);
  log.info({ process: processId }, 'store: PostgreSQL');

  return {
    kind: 'postgres',
    pool,
    orgs, ledger, flexSlots, stateOwners,
    async ready() {
      try {
        await probe.query('SELECT 1');
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      flexSlots.stop();
      await stateOwners.close();
      await ledger.close();
      await listener.close();
      await probe.end();
      await pool.end();
    },
  };
}

/** One connection that LISTENs for cache invalidations; reconnects by itself, and forgets every
 *  cached lookup when it (re)connects, since notifications sent meanwhile were lost. */
function listen(url: string, orgs: OrgStore, log: StoreOptions['log']): { close(): Promise<void> } {
  let current: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = (): void => {
    if (stopped) return;
    const client = new pg.Client(clientConfig(url));
    current = client;
    let failed = false;
    const fail = (err: unknown): void => {
      if (failed) return;
      failed = true;
      client.end().catch(() => {});
      if (stopped) return;
      log.warn({ err: { message: (err as Error)?.message } }, 'cache listener: connection lost, reconnecting');
      retry = setTimeout(connect, 500);
      retry.unref();
    };
    client.on('error', fail);
    client.on('end', () => fail(new Error('connection ended')));
    client.on('notification', (notification) => {
      const [kind, org, route] = (notification.payload ?? '').split(' ');
      if (kind === 'keys') orgs.forgetKeys(org);   // "keys <hash>" (a revoke): that key alone
      else if (kind === 'provider_key' && org && route) orgs.forgetProviderKey(org, route);
      else orgs.forgetAll();
    });
    client.connect()
      .then(() => client.query(`LISTEN ${CACHE_CHANNEL}`))
      .then(() => orgs.forgetAll(), fail);
  };
  connect();
  return {
    async close() {
      stopped = true;
      clearTimeout(retry);
      await current?.end().catch(() => {});
    },
  };
}
