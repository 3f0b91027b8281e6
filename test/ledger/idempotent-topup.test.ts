// Idempotent top-ups, on each adapter: a top-up retried with its Idempotency-Key credits once,
// however many copies race from however many processes; the same key with other amounts is
// refused and credits nothing; a key belongs to one organization.
import { describe, test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { IdempotencyConflictError } from '../../lib/ledger/rules.ts';
import { adapters, USD, type Fixture } from './helpers.ts';

for (const adapter of await adapters('idempotent_topup')) describe(adapter.name, () => {
  let f: Fixture;
  before(() => adapter.setup());
  after(() => adapter.teardown());
  beforeEach(async () => { f = await adapter.fixture(); });
  afterEach(() => f.close());

  test('twenty copies of one top-up, from two processes at once, credit it once', async () => {
    const now = f.clock.now();
    await f.ledger.ensureOrg('o', now);
    const other = (await f.reopen()).ledger;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      (i % 2 ? other : f.ledger).topup('o', { cash_micro_usd: 5 * USD, credit_micro_usd: USD }, now, 'invoice-2026-11-0042')));
    assert.equal(results.filter((r) => !r.replayed).length, 1, 'exactly one copy credited');
    const s = await f.ledger.snapshot('o', now);
    assert.equal(s.cashMicroUsd, 5 * USD);
    assert.equal(s.creditMicroUsd, USD);
    // Every replay answers the balance as it stands, which includes the one credit.
    for (const r of results) assert.equal(r.cashMicroUsd, 5 * USD);
    const entries = await f.ledger.entries('o', 50);
    const topups = entries.filter((e) => e.kind === 'topup');
    assert.equal(topups.length, 1);
    assert.equal(topups[0]!.idempotency_key, 'invoice-2026-11-0042');
  });

  test('the same key with other amounts credits nothing and throws; other keys and no key credit', async () => {
    const now = f.clock.now();
    await f.ledger.ensureOrg('o', now);
    await f.ledger.topup('o', { cash_micro_usd: 2 * USD }, now, 'k1');
    await assert.rejects(f.ledger.topup('o', { cash_micro_usd: 3 * USD }, now, 'k1'), IdempotencyConflictError);
    await assert.rejects(f.ledger.topup('o', { cash_micro_usd: 2 * USD, credit_micro_usd: 1 }, now, 'k1'), IdempotencyConflictError);
    assert.equal((await f.ledger.snapshot('o', now)).cashMicroUsd, 2 * USD);
    await f.ledger.topup('o', { cash_micro_usd: 2 * USD }, now, 'k2');
    await f.ledger.topup('o', { cash_micro_usd: 2 * USD }, now);
    await f.ledger.topup('o', { cash_micro_usd: 2 * USD }, now);
    assert.equal((await f.ledger.snapshot('o', now)).cashMicroUsd, 8 * USD, 'a top-up without a key is never a replay');
  });

  test('a key is scoped to its organization', async () => {
    const now = f.clock.now();
    await f.ledger.ensureOrg('a', now);
    await f.ledger.ensureOrg('b', now);
    await f.ledger.topup('a', { cash_micro_usd: USD }, now, 'shared-key');
    const b = await f.ledger.topup('b', { cash_micro_usd: 4 * USD }, now, 'shared-key');
    assert.equal(b.replayed, undefined);
    assert.equal(b.cashMicroUsd, 4 * USD);
    assert.equal((await f.ledger.snapshot('a', now)).cashMicroUsd, USD);
  });
});
