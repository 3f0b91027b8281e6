// Two real gateway processes on one fresh PostgreSQL database and one simulator, started before a
// suite's tests and stopped after them: the setup of the suites that check what several gateways
// share. Without PostgreSQL, `skip` says so and nothing is started.
import { before, after } from 'node:test';
import { startSimulator, type Simulator } from '../../lib/simulator/server.ts';
import { spawnGateway, type GatewayProcess } from './gateway-process.ts';
import { createTestDatabase, postgresReachable, type TestDatabase } from './postgres.ts';

export interface SharedGateways {
  /** The test option: false, or why the suite cannot run. */
  readonly skip: string | false;
  readonly admin: string;
  /** The two processes, once `before` ran. */
  readonly gws: GatewayProcess[];
}

/** Registers the suite's before/after hooks; `name` names its database and tokens, `env` adds to
 *  every process's environment. */
export async function sharedGateways(name: string, env: Record<string, string> = {}): Promise<SharedGateways> {
  const available = await postgresReachable();
  const admin = `${name}-admin-token`;
  const gws: GatewayProcess[] = [];
  let db: TestDatabase | undefined;
  let simulator: Simulator | undefined;
  before(async () => {
    if (!available) return;
    db = await createTestDatabase(`${name}_e2e`);
    simulator = await startSimulator({ standard: { startMs: 5 }, tokensPerS: 1_000, outputTokens: 4 });
    const all = { GATEWAY_DATABASE_URL: db.url, GATEWAY_ADMIN_TOKEN: admin, GATEWAY_SECRET_KEY: `${name}-secret`, SIM_URL: simulator.url, ...env };
    gws.push(...await Promise.all([0, 1].map(() => spawnGateway(all))));
  });
  after(async () => {
    if (!available) return;
    await Promise.all(gws.map((g) => g.stop()));
    await simulator?.close();
    await db?.drop();
  });
  return { skip: available ? false : 'PostgreSQL not reachable', admin, gws };
}
