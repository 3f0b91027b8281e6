// A client that sends its next request as soon as it has read the previous answer (an agent's
// loop, a script) must find that answer's request gone: not holding the organization's only
// concurrency slot, not counted against today's ceiling with its whole hold, not shown in the
// limits report as reserved. On PostgreSQL the settlement is a round trip, which the next request
// used to outrun (the hold was settled after the answer's last bytes went out): a gateway process
// on a real database, a strictly sequential client.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSimulator } from '../../lib/simulator/server.ts';
import { createTestDatabase, postgresReachable } from '../helpers/postgres.ts';
import { spawnGateway } from '../helpers/gateway-process.ts';
import { sim } from '../helpers/wait.ts';

const skip = (await postgresReachable()) ? false : 'PostgreSQL not reachable';
const ADMIN = 'sequential-admin';
const cleanups: Array<() => Promise<void> | void> = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

test('a sequential client on PostgreSQL: every answer has released its slot and settled its hold when its last byte arrives', { skip }, async () => {
  const simulator = await startSimulator({ standard: { startMs: 10 }, tokensPerS: 0, outputTokens: 8 });
  cleanups.push(() => simulator.close());
  const db = await createTestDatabase('sequential');
  cleanups.push(() => db.drop());
  const g = await spawnGateway({
    GATEWAY_ADMIN_TOKEN: ADMIN, SIM_URL: simulator.url, GATEWAY_SECRET_KEY: 'sequential-secret', GATEWAY_INSTANCE_ID: 'sequential',
    GATEWAY_DATABASE_URL: db.url,
  });
  cleanups.push(() => g.stop());
  const admin = async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await fetch(g.url + path, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    assert.ok(res.ok, `${method} ${path}: ${res.status}`);
    return res.json();
  };
  const org = (await admin('POST', '/admin/v1/orgs', { name: 'sequential' })).id as string;
  await admin('POST', `/admin/v1/orgs/${org}/topups`, { cash_micro_usd: 10_000_000 });
  await admin('PUT', `/admin/v1/orgs/${org}/overrides`, { concurrency: 1 });
  const key = (await admin('POST', `/admin/v1/orgs/${org}/keys`, {})).key as string;
  const statuses: number[] = [];
  const reserved: number[] = [];
  for (let i = 0; i < 40; i++) {
    const res = await fetch(`${g.url}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-mini', start_within: 'now', stream: i % 2 === 1, input: `n${i} ${sim({ output_tokens: 8 })}` }),
    });
    await res.text();
    statuses.push(res.status);
    if (i % 4 === 0) reserved.push((await (await fetch(`${g.url}/v1/limits`, { headers: { authorization: `Bearer ${key}` } })).json() as any).managed.balance.reserved_micro_usd);
  }
  assert.deepEqual(statuses, Array(40).fill(200), 'the concurrency limit of 1 never counted a request that had ended');
  assert.deepEqual(reserved, Array(10).fill(0), 'nothing reserved once an answer was read');
});
