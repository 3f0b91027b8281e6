// The snapshot (what GET /v1/limits reports) against admission, the contract suite run once per
// adapter: for every state of the spec's "Managed serving state" table, and the states between,
// the snapshot says paused with reason R exactly when the next managed request is refused with R,
// before any request has been refused (a pause is shown as soon as admission would apply it, not
// once admission has stored it), in admission's order of reasons.
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { PauseReason } from '../../lib/ledger/types.ts';
import { adapters, fundedOrg, admit, okHold, USD, DAY, CONFIG, type Fixture } from './helpers.ts';

interface State {
  name: string;
  /** Brings org 'o' into the state (at most one refusal already taken, where the state needs a stored pause). */
  setup(f: Fixture): Promise<void>;
  /** The pause the snapshot must show, which is the code the next admission must refuse with. */
  pause: PauseReason | null;
  /** Not paused, but the next request is refused anyway (concurrency): no pause, no room lost. */
  refused?: 'rate_limit_exceeded';
}

const now = (f: Fixture): number => f.clock.now();
const settleAt = async (f: Fixture, hold: number, cost: number): Promise<void> => {
  await f.ledger.settle(okHold(await admit(f, 'o', hold)), cost, now(f));
};
const storeRefusal = async (f: Fixture, code: PauseReason): Promise<void> => {
  assert.deepEqual(await admit(f, 'o', 1), { ok: false, code }, 'setup: the refusal that stores the pause');
};

const STATES: State[] = [
  { name: 'never topped up: balance 0', pause: 'insufficient_balance', setup: (f) => f.ledger.ensureOrg('o', now(f)) },
  {
    name: 'promo credit only, week 0, room left', pause: null,
    setup: async (f) => { await f.ledger.ensureOrg('o', now(f)); await f.ledger.topup('o', { credit_micro_usd: 3 * USD }, now(f)); },
  },
  { name: 'topped up, room left', pause: null, setup: (f) => fundedOrg(f, 'o', 5 * USD) },
  {
    name: 'a settlement took the balance below zero (no request refused yet)', pause: 'insufficient_balance',
    setup: async (f) => { await fundedOrg(f, 'o', 1 * USD); await settleAt(f, 500_000, 1_300_000); },
  },
  {
    name: 'a settlement took the balance to exactly zero', pause: 'insufficient_balance',
    setup: async (f) => { await fundedOrg(f, 'o', 1 * USD); await settleAt(f, 500_000, 1 * USD); },
  },
  {
    name: 'a settlement reached the daily ceiling (no request refused yet)', pause: 'spend_velocity_exceeded',
    setup: async (f) => { await fundedOrg(f, 'o', 100 * USD); await settleAt(f, 1 * USD, 10 * USD); },
  },
  {
    name: 'live holds reached the daily ceiling', pause: 'spend_velocity_exceeded',
    setup: async (f) => { await fundedOrg(f, 'o', 100 * USD); okHold(await admit(f, 'o', 10 * USD)); },
  },
  {
    name: 'one micro-USD under the daily ceiling', pause: null,
    setup: async (f) => { await fundedOrg(f, 'o', 100 * USD); await settleAt(f, 1 * USD, 10 * USD - 1); },
  },
  {
    name: 'balance at or below zero and the ceiling reached: the balance first, as admission checks it', pause: 'insufficient_balance',
    setup: async (f) => {
      await fundedOrg(f, 'o', 5 * USD);
      await f.ledger.setOverrides('o', { daily_spend_micro_usd: 1 * USD }, now(f));
      await settleAt(f, 1 * USD, 6 * USD);
    },
  },
  {
    name: 'a stored daily-ceiling pause stays first when the balance then goes below zero', pause: 'spend_velocity_exceeded',
    setup: async (f) => {
      await fundedOrg(f, 'o', 10 * USD);
      const h = okHold(await admit(f, 'o', 10 * USD));
      await storeRefusal(f, 'spend_velocity_exceeded');
      await f.ledger.settle(h, 12 * USD, now(f));
    },
  },
  {
    name: 'a stored insufficient_balance repaired by a top-up while the ceiling is reached', pause: 'spend_velocity_exceeded',
    setup: async (f) => {
      await fundedOrg(f, 'o', 1 * USD);
      await f.ledger.setOverrides('o', { daily_spend_micro_usd: 2 * USD }, now(f));
      await settleAt(f, 1 * USD, 3 * USD);
      await storeRefusal(f, 'insufficient_balance');
      await f.ledger.topup('o', { cash_micro_usd: 10 * USD }, now(f));
    },
  },
  {
    name: 'under review with money and room', pause: 'account_under_review',
    setup: async (f) => { await fundedOrg(f, 'o', 5 * USD); await f.ledger.startReview('o', now(f)); },
  },
  {
    name: 'under review with the balance at zero and the ceiling reached: the review first', pause: 'account_under_review',
    setup: async (f) => {
      await fundedOrg(f, 'o', 1 * USD);
      await f.ledger.setOverrides('o', { daily_spend_micro_usd: 1 * USD }, now(f));
      await settleAt(f, 1, 1 * USD);
      await f.ledger.startReview('o', now(f));
    },
  },
  {
    name: 'review ended with the balance at zero', pause: 'insufficient_balance',
    setup: async (f) => {
      await fundedOrg(f, 'o', 1 * USD);
      await settleAt(f, 1, 1 * USD);
      await f.ledger.startReview('o', now(f));
      await f.ledger.endReview('o', now(f));
    },
  },
  {
    name: 'exempt with the balance at zero', pause: 'insufficient_balance',
    setup: async (f) => { await f.ledger.ensureOrg('o', now(f)); await f.ledger.setExempt('o', true, now(f)); },
  },
  {
    name: 'exempt, spent far past the schedule\'s ceiling', pause: null,
    setup: async (f) => { await fundedOrg(f, 'o', 100 * USD); await f.ledger.setExempt('o', true, now(f)); await settleAt(f, 1, 30 * USD); },
  },
  {
    name: 'a stored daily-ceiling pause after the next UTC midnight', pause: null,
    setup: async (f) => {
      await fundedOrg(f, 'o', 100 * USD);
      await settleAt(f, 1, 10 * USD);
      await storeRefusal(f, 'spend_velocity_exceeded');
      f.clock.set((Math.floor(now(f) / DAY) + 1) * DAY);
    },
  },
  {
    name: 'a stored daily-ceiling pause under a raised ceiling', pause: null,
    setup: async (f) => {
      await fundedOrg(f, 'o', 100 * USD);
      await settleAt(f, 1, 10 * USD);
      await storeRefusal(f, 'spend_velocity_exceeded');
      await f.ledger.setOverrides('o', { daily_spend_micro_usd: 12 * USD }, now(f));
    },
  },
  {
    name: 'concurrency full: refused without a pause', pause: null, refused: 'rate_limit_exceeded',
    setup: async (f) => { await fundedOrg(f, 'o', 10 * USD); for (let i = 0; i < 4; i++) okHold(await admit(f, 'o', 1000)); },
  },
  {
    name: 'a lapsed hold whose release will charge the balance to zero', pause: 'insufficient_balance',
    setup: async (f) => {
      await fundedOrg(f, 'o', 1 * USD);
      const h = okHold(await admit(f, 'o', 1 * USD));
      await f.ledger.renew([{ holdId: h, deliveredMicroUsd: 1 * USD }], now(f));
      f.clock.set(now(f) + CONFIG.hold_lease_ms);
    },
  },
  {
    name: 'a lapsed hold whose release will reach the daily ceiling', pause: 'spend_velocity_exceeded',
    setup: async (f) => {
      await fundedOrg(f, 'o', 100 * USD);
      const h = okHold(await admit(f, 'o', 10 * USD));
      await f.ledger.renew([{ holdId: h, deliveredMicroUsd: 10 * USD }], now(f));
      f.clock.set(now(f) + CONFIG.hold_lease_ms);
    },
  },
];

for (const adapter of await adapters('report_agreement')) describe(adapter.name, () => {
  let f: Fixture;
  before(() => adapter.setup());
  after(() => adapter.teardown());
  beforeEach(async () => { f = await adapter.fixture(); });
  afterEach(() => f.close());

  for (const state of STATES) {
    test(`snapshot ⇔ admission: ${state.name}`, async () => {
      await state.setup(f);
      const s = await f.ledger.snapshot('o', now(f));
      assert.equal(s.pausedReason, state.pause, 'the pause shown');
      assert.equal(s.serving, state.pause === null ? 'ok' : 'paused');
      const r = await admit(f, 'o', 1);
      if (state.pause !== null) {
        assert.deepEqual(r, { ok: false, code: state.pause }, 'the next request is refused with the pause shown');
        assert.equal(s.binding, 'paused');
        assert.ok(s.spendRemainingMicroUsd <= 0, 'no positive figure while paused');
      } else if (state.refused) {
        assert.equal(r.ok ? 'ok' : r.code, state.refused);
      } else {
        assert.ok(r.ok, `admitted (got ${r.ok ? '' : r.code})`);
        assert.equal(r.spendRemainingMicroUsd, s.spendRemainingMicroUsd, 'the header of that request is the figure shown');
      }
      // A refusal changes nothing but the stored pause: the report goes on saying the same.
      if (!r.ok) assert.equal((await f.ledger.snapshot('o', now(f))).pausedReason, state.pause, 'the pause shown after the refusal');
    });
  }

  test('a lapsed hold: the snapshot shows the money and the day as admission will find them after releasing it', async () => {
    await fundedOrg(f, 'o', 1 * USD, 300_000);
    const h = okHold(await admit(f, 'o', 1 * USD));
    await f.ledger.renew([{ holdId: h, deliveredMicroUsd: 1_100_000 }], now(f));
    f.clock.set(now(f) + CONFIG.hold_lease_ms);
    const s = await f.ledger.snapshot('o', now(f));
    assert.deepEqual(
      [s.cashMicroUsd, s.creditMicroUsd, s.reservedMicroUsd, s.inFlight, s.dailyUsedMicroUsd, s.spendRemainingMicroUsd],
      [0, 200_000, 0, 0, 1_100_000, 200_000], 'cash first, then credit; counted in today\'s spend',
    );
    const r = await admit(f, 'o', 1);
    assert.ok(r.ok);
    assert.equal(r.spendRemainingMicroUsd, s.spendRemainingMicroUsd);
    const after = await f.ledger.snapshot('o', now(f));
    assert.deepEqual([after.cashMicroUsd, after.creditMicroUsd, after.dailyUsedMicroUsd], [0, 200_000, 1_100_001]);
  });
});
