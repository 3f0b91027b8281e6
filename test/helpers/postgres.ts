// The real local PostgreSQL for the shared-store suites. `make test` runs them when the server
// answers and says clearly when it skips them; `.ci/run` sets GATEWAY_TEST_REQUIRE_PG=1, which
// turns "not reachable" into a failure. Each suite creates its own uniquely named database and
// drops it afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../lib/store/postgres.ts';

/** The maintenance database of the test server (trust authentication, user postgres). */
export const PG_SERVER_URL = process.env.GATEWAY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const PG_REQUIRED = process.env.GATEWAY_TEST_REQUIRE_PG === '1';

let reachable: Promise<boolean> | undefined;

/** Whether the test server answers; fails the suite instead when PostgreSQL is required. */
export function postgresReachable(): Promise<boolean> {
  reachable ??= (async () => {
    const c = new pg.Client({ connectionString: PG_SERVER_URL, connectionTimeoutMillis: 2_000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } catch (err) {
      if (PG_REQUIRED) throw new Error(`PostgreSQL is required (GATEWAY_TEST_REQUIRE_PG=1) but ${PG_SERVER_URL.replace(/\/\/[^@]*@/, '//')} does not answer: ${(err as Error).message}`);
      console.log(`SKIPPED: PostgreSQL suites — no server at ${PG_SERVER_URL.replace(/\/\/[^@]*@/, '//')} (${(err as Error).message}); set GATEWAY_TEST_REQUIRE_PG=1 to make this a failure`);
      return false;
    } finally {
      await c.end().catch(() => {});
    }
  })();
  return reachable;
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A fresh database (`gwtest_<tag>_<random>`), migrated when asked. */
export async function createTestDatabase(tag: string, opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `gwtest_${tag}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_SERVER_URL });
  await admin.connect();
  try { await admin.query(`CREATE DATABASE ${name}`); } finally { await admin.end(); }
  const u = new URL(PG_SERVER_URL);
  u.pathname = '/' + name;
  const url = u.toString();
  if (opts.migrated) {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try { await migrate(pool); } finally { await pool.end(); }
  }
  return {
    name, url,
    async drop() {
      const c = new pg.Client({ connectionString: PG_SERVER_URL });
      await c.connect();
      try { await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); } finally { await c.end(); }
    },
  };
}

/** A pool on `url` that reads BIGINT as numbers, as the gateway's does. */
export function testPool(url: string, max = 4): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url, max,
    types: { getTypeParser: ((oid: number, f?: 'text') => oid === 20 ? Number : pg.types.getTypeParser(oid, f as 'text')) as typeof pg.types.getTypeParser },
  });
  pool.on('error', () => {}); // an idle connection closed by the server (the database dropped)
  return pool;
}
