// Own-key flex race slots shared through PostgreSQL across an outage (lib/store/postgres-flex-slots.ts):
// races that end while the database is unreachable cannot delete their slot rows; once it answers
// again the rows are deleted and the organization races flex again on every process, rather than
// getting flex_slots_full until the process restarts (its renewals used to keep those rows alive).
// Two real gateway processes reach PostgreSQL through a TCP proxy the test cuts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { startSimulator, type Simulator } from '../../lib/simulator/server.ts';
import { spawnGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { createTestDatabase, postgresReachable, testPool, type TestDatabase } from '../helpers/postgres.ts';
import { sim, waitFor } from '../helpers/wait.ts';

const ADMIN = 'flex-slots-outage-admin';
const SLOTS = 3;
const MODEL = 'gpt-5.4-mini';

const available = await postgresReachable();
const skip = available ? false : 'PostgreSQL not reachable';
let db: TestDatabase;
let proxy: TcpProxy;
let simulator: Simulator;
let pool: pg.Pool;
const gws: GatewayProcess[] = [];

before(async () => {
  if (!available) return;
  db = await createTestDatabase('flex_outage');
  proxy = await startTcpProxy('127.0.0.1', Number(new URL(db.url).port || 5432));
  simulator = await startSimulator({ standard: { startMs: 20 }, tokensPerS: 100, outputTokens: 4 });
  const url = new URL(db.url);
  url.host = `127.0.0.1:${proxy.port}`;
  const env = {
    GATEWAY_DATABASE_URL: url.toString(), GATEWAY_ADMIN_TOKEN: ADMIN, GATEWAY_SECRET_KEY: 'flex-slots-outage-secret', SIM_URL: simulator.url,
    CHILD_CONFIG: JSON.stringify({ flex_race_slots: SLOTS }),
  };
  gws.push(...await Promise.all([0, 1].map(() => spawnGateway(env))));
  pool = testPool(db.url);
});

after(async () => {
  if (!available) return;
  await Promise.all(gws.map((g) => g.stop()));
  await pool?.end();
  await simulator?.close();
  await proxy?.close();
  await db?.drop();
});

async function admin(g: GatewayProcess, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(g.url + path, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`admin ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** A flex-capable own-key request; answers its status and how its flex race went. */
async function race(g: GatewayProcess, key: string, flexStartMs: number): Promise<string> {
  const res = await fetch(`${g.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, start_within: '00h-00m-20s', input: `hi ${sim({ flex_start_ms: flexStartMs, output_tokens: 2 })}` }),
  });
  await res.arrayBuffer();
  return `${res.status} ${res.headers.get('x-service-flex-reason')}`;
}

const slotRows = async (orgId: string): Promise<number> =>
  (await pool.query('SELECT count(*)::INT AS n FROM flex_race_slots WHERE org_id = $1', [orgId])).rows[0].n;

test('races that end while PostgreSQL is unreachable give their flex slots back once it answers again', { skip }, async () => {
  const [a, b] = gws as [GatewayProcess, GatewayProcess];
  const { id: orgId } = await admin(a, 'POST', '/admin/v1/orgs', { name: 'own keys' });
  await admin(a, 'PUT', `/admin/v1/orgs/${orgId}/provider-keys/vendor_a`, { key: 'own-vendor-a-key' });
  const { key } = await admin(a, 'POST', `/admin/v1/orgs/${orgId}/keys`, {});
  assert.deepEqual([await race(a, key, 30), await race(b, key, 30)], ['200 flex_committed', '200 flex_committed']);

  // Every slot of the organization held by races on A, which end while the database is away.
  const races = Array.from({ length: SLOTS }, () => race(a, key, 1_500));
  await waitFor(async () => (await slotRows(orgId)) === SLOTS, 'the races to hold every slot');
  proxy.cut();
  try {
    assert.deepEqual(await Promise.all(races), Array(SLOTS).fill('200 flex_committed'));
  } finally {
    proxy.restore();
  }

  await waitFor(async () => (await slotRows(orgId)) === 0, 'the slots given back once the database answers', 5_000);
  assert.deepEqual([await race(a, key, 30), await race(b, key, 30)], ['200 flex_committed', '200 flex_committed'],
    'the organization races flex again on every process');
});
