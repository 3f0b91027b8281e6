// `npm run migrate-to-postgres`: moves a stopped SQLite gateway's data into a new PostgreSQL
// database (lib/store/sqlite-to-postgres.ts; README, "Running several gateways").
//   GATEWAY_DATA_DIR (./data)      the SQLite gateway's data folder (gateway.db, secret.key)
//   GATEWAY_DATABASE_URL           postgres://…: the target, created (createdb) and empty
//   GATEWAY_SECRET_KEY             the PostgreSQL gateways' secret: provider keys are sealed with it
//   GATEWAY_SOURCE_SECRET_KEY      what the SQLite gateway sealed them with, when that was not
//                                  $GATEWAY_DATA_DIR/secret.key (by default that file, and without
//                                  it GATEWAY_SECRET_KEY: the SQLite gateway ran with it)
//   GATEWAY_CONFIG                 read for ledger.hold_lease_ms only
// Exit 0: copied and verified. 2: refused (the message says why; nothing changed). 1: failed
// (nothing committed; the target's tables may have been created, as a gateway start creates them).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from './config.ts';
import { MigrationRefused, migrateSqliteToPostgres } from './store/sqlite-to-postgres.ts';

const REFUSED = 2;
const FAILED = 1;

async function run(): Promise<number> {
  const dataDir = process.env.GATEWAY_DATA_DIR || './data';
  const databaseUrl = process.env.GATEWAY_DATABASE_URL;
  if (!databaseUrl || !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    console.error('migrate-to-postgres: set GATEWAY_DATABASE_URL to the target postgres://… database (create it first: createdb)');
    return REFUSED;
  }
  const secretFile = join(dataDir, 'secret.key');
  const sourceSecret = process.env.GATEWAY_SOURCE_SECRET_KEY
    || (existsSync(secretFile) ? readFileSync(secretFile, 'utf8').trim() : process.env.GATEWAY_SECRET_KEY);
  try {
    await migrateSqliteToPostgres({
      dataDir, databaseUrl, sourceSecret, targetSecret: process.env.GATEWAY_SECRET_KEY,
      leaseMs: loadConfig(process.env.GATEWAY_CONFIG).ledger.hold_lease_ms,
      print: (line) => console.log(line),
    });
    console.log('migrated: start the gateways with GATEWAY_DATABASE_URL and this GATEWAY_SECRET_KEY');
    return 0;
  } catch (err) {
    if (err instanceof MigrationRefused) {
      console.error(`migrate-to-postgres: refused, nothing changed: ${err.message}`);
      return REFUSED;
    }
    console.error(`migrate-to-postgres: failed, nothing was committed: ${failure(err)}`);
    return FAILED;
  }
}

/** The cause in an operator's terms where it is a common one (the URL, which may carry a password,
 *  is not repeated). */
function failure(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === '3D000') return 'the database named in GATEWAY_DATABASE_URL does not exist: create it first (createdb)';
  if (code === 'ECONNREFUSED') return 'PostgreSQL refused the connection (GATEWAY_DATABASE_URL): is the server running and listening there?';
  if (code === 'ENOTFOUND') return 'the host named in GATEWAY_DATABASE_URL does not resolve';
  if (code === '28P01' || code === '28000') return 'PostgreSQL refused the credentials in GATEWAY_DATABASE_URL';
  return (err as Error)?.message ?? String(err);
}

process.exitCode = await run();
