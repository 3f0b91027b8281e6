// When a predecessor of an instance is provably gone (lib/ledger/liveness.ts): the rule, and the
// pid check against real processes of this host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { predecessorGone, pidAlive, thisHost, type PredecessorRow } from '../../lib/ledger/liveness.ts';
import { waitFor } from '../helpers/wait.ts';
import { deadPid } from './helpers.ts';

const LEASE = 30_000;
const NOW = 1_000_000;
const me = { host: 'h', pid: 100 };
const row = (o: Partial<PredecessorRow>): PredecessorRow => ({ process_id: 'p', host: 'h', pid: 200, heartbeat_at_ms: NOW - 1_000, ...o });

test('gone: never registered → no; heartbeat older than the lease → yes anywhere; else only on this host with its pid dead or reused by this process', () => {
  const alive = (pid: number): boolean => pid !== 666;
  const cases: Array<[string, PredecessorRow, boolean]> = [
    ['never registered (an earlier build)', row({ host: null, pid: null, heartbeat_at_ms: null }), false],
    ['this host, pid alive, fresh heartbeat (a second start, a drain)', row({}), false],
    ['this host, pid dead', row({ pid: 666 }), true],
    ['this host, its pid is this process\'s own (reused)', row({ pid: 100 }), true],
    ['another host, pid "dead" there says nothing', row({ host: 'other', pid: 666 }), false],
    ['another host, heartbeat one lease old', row({ host: 'other', heartbeat_at_ms: NOW - LEASE }), true],
    ['this host, pid alive, heartbeat one lease old', row({ heartbeat_at_ms: NOW - LEASE }), true],
    ['heartbeat just under one lease old', row({ host: 'other', heartbeat_at_ms: NOW - LEASE + 1 }), false],
  ];
  for (const [what, r, gone] of cases) assert.equal(predecessorGone(r, me, NOW, LEASE, alive), gone, what);
});

test('pidAlive: a running process yes; an exited one, or a zombie not yet reaped by its parent, no', async () => {
  assert.equal(pidAlive(process.pid), true);
  assert.equal(pidAlive(deadPid()), false);
  // `sleep 0 &` exits at once and its parent (exec'd into `sleep 5`) never reaps it: a zombie.
  const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 5'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const zombie = Number(await new Promise<string>((resolve) => createInterface({ input: parent.stdout! }).once('line', resolve)));
    assert.equal(pidAlive(parent.pid!), true);
    await waitFor(() => !pidAlive(zombie), 'the exited child to read as gone', 2_000);
  } finally {
    parent.kill('SIGKILL');
  }
});

test('the host key names this kernel and pid namespace, not only the hostname', () => {
  const key = thisHost();
  if (process.platform === 'linux') assert.match(key, /\/[0-9a-f-]{36}\/pid:\[\d+\]$/);
  assert.equal(thisHost(), key, 'stable');
});
