// The process registry's view of who runs and which secret each seals provider keys with
// (liveness.ts sealPeers): a process counts while its heartbeat is younger than the lease and it
// has not stopped; one registered without a fingerprint (an earlier build) counts as unknown.
import { describe, test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { runningProcesses, sealPeers } from '../../lib/ledger/liveness.ts';
import { sealFingerprint } from '../../lib/store/secrets.ts';
import { adapters, CONFIG, type Fixture } from './helpers.ts';

const A = sealFingerprint('secret-a'), B = sealFingerprint('secret-b');

for (const adapter of await adapters('seal_peers')) describe(adapter.name, () => {
  let f: Fixture;
  before(() => adapter.setup());
  after(() => adapter.teardown());
  beforeEach(async () => { f = await adapter.fixture(); });
  afterEach(() => f.close());

  test('running processes and their fingerprints: the lease, a stop and an earlier build decide who counts', async () => {
    const t0 = f.clock.now();
    const [p1, p2, p3] = [
      (await f.reopen(CONFIG, { instanceId: 'host:1', processId: 'p1' })).ledger,
      (await f.reopen(CONFIG, { instanceId: 'host:2', processId: 'p2' })).ledger,
      (await f.reopen(CONFIG, { instanceId: 'host:3', processId: 'p3' })).ledger,
    ];
    await p1.releasePredecessors(t0, A);
    await p2.releasePredecessors(t0, B);
    await p3.releasePredecessors(t0);                       // says nothing of its secret
    const seen = await p1.liveProcesses(t0 + 1_000);
    assert.deepEqual(seen.map((p) => [p.processId, p.sealFingerprint, p.self]), [['p1', A, true], ['p2', B, false], ['p3', null, false]]);
    assert.deepEqual(sealPeers(seen, { current: A, previous: [B] }), { others: 2, different: 1, onPrevious: 1, unknown: 1 });

    // A process that shut down stops counting at once.
    await p2.close();
    assert.deepEqual((await p1.liveProcesses(t0 + 1_000)).map((p) => p.processId), ['p1', 'p3']);

    // p1 renews (its heartbeat only: the fingerprint stays); p3 does not: past the lease it no
    // longer counts.
    await p1.renew([], t0 + 20_000);
    const later = await p1.liveProcesses(t0 + CONFIG.hold_lease_ms);
    assert.deepEqual(later.map((p) => [p.processId, p.sealFingerprint]), [['p1', A]]);
  });
});

test('a process killed on this host no longer counts once its pid is dead, before its heartbeat lapses; one elsewhere counts until then', () => {
  const me = { host: 'h1', pid: 10 };
  const row = (id: string, host: string, pid: number) => ({ process_id: id, instance_id: id, host, pid, heartbeat_at_ms: 1, seal_fingerprint: A });
  const rows = [row('self', 'h1', 10), row('killed', 'h1', 11), row('alive', 'h1', 12), row('elsewhere', 'h2', 11)];
  const seen = runningProcesses(rows, 'self', me, (pid) => pid !== 11).map((p) => p.processId);
  assert.deepEqual(seen, ['self', 'alive', 'elsewhere']);
});
