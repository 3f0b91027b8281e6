// The SQLite adapter's group commit: the admissions and settlements of one event-loop turn share
// one IMMEDIATE transaction, each as its own savepoint. Each still sees every write before it, one
// that throws rolls back alone, and each call resolves only after the commit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { admit, fixture, fundedOrg, okHold, openDb, USD } from './helpers.ts';

const walBytes = (file: string): number => statSync(`${file}-wal`).size;

test('the admissions of one turn each see the ones before them: exactly the concurrency is admitted', async () => {
  const f = fixture();
  try {
    await fundedOrg(f, 'o', 100 * USD);   // ramp week 1: concurrency 4
    const results = await Promise.all(Array.from({ length: 10 }, () => admit(f, 'o', 1_000)));
    assert.equal(results.filter((r) => r.ok).length, 4);
    assert.ok(results.slice(4).every((r) => !r.ok && r.code === 'rate_limit_exceeded'), 'the first four in arrival order');
    // Resolved means committed: another connection sees the four holds.
    const other = await f.reopen();
    assert.equal((await other.ledger.snapshot('o', f.clock.now())).inFlight, 4);
  } finally {
    await f.close();
  }
});

test('one commit per turn: a turn of admissions and settlements writes a fraction of what one commit each wrote', async () => {
  const f = fixture({ ramp: [{ week: 0, concurrency: 1_000, daily_spend_micro_usd: 1_000 * USD }], hold_lease_ms: 30_000, pools: [] });
  try {
    await fundedOrg(f, 'o', 1_000 * USD);
    const now = f.clock.now();
    const N = 20;
    // One call per turn: each is its own commit (WAL frames for every page it touched).
    let before = walBytes(f.file);
    for (let i = 0; i < N; i++) await f.ledger.settle(okHold(await admit(f, 'o', 1_000)), 500, now);
    const separate = walBytes(f.file) - before;
    // The same work in two turns: the admissions together, then the settlements together.
    before = walBytes(f.file);
    const holds = (await Promise.all(Array.from({ length: N }, () => admit(f, 'o', 1_000)))).map(okHold);
    await Promise.all(holds.map((h) => f.ledger.settle(h, 500, now)));
    const grouped = walBytes(f.file) - before;
    assert.ok(grouped * 4 < separate, `WAL bytes: ${grouped} in two turns, ${separate} in ${2 * N} commits`);
    const s = await f.ledger.snapshot('o', now);
    assert.equal(s.inFlight, 0);
    assert.equal(s.dailyUsedMicroUsd, 2 * N * 500, 'every settlement charged once');
  } finally {
    await f.close();
  }
});

test('an admission that throws rolls back alone: the others of its turn are admitted and committed', async () => {
  const f = fixture();
  try {
    await fundedOrg(f, 'o', 100 * USD);
    const [a, unknown, b] = await Promise.allSettled([admit(f, 'o', 1_000), admit(f, 'nobody', 1_000), admit(f, 'o', 1_000)]);
    assert.equal(a.status, 'fulfilled');
    assert.equal(b.status, 'fulfilled');
    assert.equal(unknown.status, 'rejected');
    assert.match(String((unknown as PromiseRejectedResult).reason), /unknown organization/);
    const db = openDb(f.file);
    try {
      assert.equal((db.prepare("SELECT count(*) AS n FROM ledger_holds WHERE org_id = 'o'").get() as { n: number }).n, 2);
      assert.equal((db.prepare("SELECT count(*) AS n FROM ledger_holds WHERE org_id = 'nobody'").get() as { n: number }).n, 0);
    } finally {
      db.close();
    }
  } finally {
    await f.close();
  }
});
