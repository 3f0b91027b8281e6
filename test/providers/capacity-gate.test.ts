// The route's capacity gate (lib/providers/capacity.ts): flex attempts together hold at most
// flex_share of the connections, so waiting flex attempts cannot take a route from standard ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CapacityRefused, RouteGate } from '../../lib/providers/capacity.ts';

test('flex attempts hold at most flex_share of the connections; standard ones take the rest; a released flex slot is free again', () => {
  const gate = new RouteGate({ connections: 4, queue: 4, orgShare: 1, flexShare: 0.5 });
  const refusals: string[] = [];
  const releases: Array<() => void> = [];
  const ask = (org: string, flex: boolean) =>
    gate.acquire(org, flex ? 0 : 1_000, (release) => releases.push(release), (err: CapacityRefused) => refusals.push(`${org} ${err.reason}`), flex);
  ask('a', true);
  ask('b', true);
  ask('c', true);
  assert.deepEqual([gate.inUse, gate.flexInUse, refusals], [2, 2, ['c flex_share']]);
  ask('c', false);
  ask('d', false);
  assert.deepEqual([gate.inUse, gate.flexInUse], [4, 2], 'the other half is standard\'s');
  releases[0]!();
  ask('e', true);
  assert.deepEqual([gate.inUse, gate.flexInUse, refusals], [4, 2, ['c flex_share']], 'the freed flex slot was taken by flex again');
  assert.equal(new RouteGate({ connections: 256, queue: 0, orgShare: 0.5 }).flexCap, 192, 'the default share is 0.75');
});
