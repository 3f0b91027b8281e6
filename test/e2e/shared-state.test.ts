// Provider-held state on managed routes with several gateways on one PostgreSQL database: the id
// org A was handed by one process is known to the other at once (its owner row is written before
// A could name it again), so A continues it there and org B is refused there too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { GatewayProcess } from '../helpers/gateway-process.ts';
import { sharedGateways } from '../helpers/shared-gateways.ts';

const { skip, admin: ADMIN, gws } = await sharedGateways('state');

async function call(g: GatewayProcess, path: string, token: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(g.url + path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

async function managedOrg(): Promise<string> {
  const org = JSON.parse((await call(gws[0]!, '/admin/v1/orgs', ADMIN, { name: 'state' })).text);
  assert.equal((await call(gws[0]!, `/admin/v1/orgs/${org.id}/topups`, ADMIN, { cash_micro_usd: 10_000_000 })).status, 200);
  return JSON.parse((await call(gws[1]!, `/admin/v1/orgs/${org.id}/keys`, ADMIN, {})).text).key;
}

test('two gateways on one PostgreSQL: an id issued to org A by one is continued by A on the other at once, refused to org B', { skip }, async () => {
  const [a, b] = [await managedOrg(), await managedOrg()];
  for (const stream of [false, true]) {
    const first = await call(gws[0]!, '/v1/responses', a, { model: 'gpt-5.4-mini', input: 'ORG-A private', start_within: 'now', stream });
    assert.equal(first.status, 200, first.text);
    const id = /"id":"(resp_[^"]+)"/.exec(first.text)![1]!;
    const next = { model: 'gpt-5.4-mini', input: 'And then?', previous_response_id: id, start_within: 'now' };
    const mine = await call(gws[1]!, '/v1/responses', a, next);
    assert.equal(mine.status, 200, mine.text);
    for (const g of gws) {
      const theirs = await call(g, '/v1/responses', b, next);
      assert.equal(theirs.status, 404, theirs.text);
      assert.match(JSON.parse(theirs.text).error.message, /Previous response with id '.*' not found/);
    }
  }
});
