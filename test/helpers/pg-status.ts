// `make test` says up front whether the PostgreSQL suites will run (and fails at once when they
// are required and the server does not answer).
import { PG_REQUIRED, PG_SERVER_URL, postgresReachable } from './postgres.ts';

const where = PG_SERVER_URL.replace(/\/\/[^@]*@/, '//');
try {
  if (await postgresReachable()) console.log(`PostgreSQL at ${where}: the shared-store suites run${PG_REQUIRED ? ' (required)' : ''}`);
  else console.log(`*** PostgreSQL NOT reachable at ${where}: the shared-store suites are SKIPPED (GATEWAY_TEST_REQUIRE_PG=1, as in .ci/run, makes this a failure) ***`);
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
