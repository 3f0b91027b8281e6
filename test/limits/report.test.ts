// The limits report: shape against schemas/limits-report.json, serializer round trip, and figures
// that agree with admission.
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { buildLimitsReport, serializeLimitsReport, type LimitsReportInput } from '../../lib/limits/report.ts';
import type { Snapshot } from '../../lib/ledger/types.ts';
import { fixture, fundedOrg, admit, okHold, USD, type Fixture } from '../ledger/helpers.ts';

const schema = JSON.parse(readFileSync(new URL('../../schemas/limits-report.json', import.meta.url), 'utf8')) as object;
const validate = new Ajv({ strict: true, allErrors: true }).compile(schema);
const abuse = { organization_requests: 600, api_key_requests: 300, client_ip_requests: 1200, failed_authentications: 10 };

let f: Fixture;
beforeEach(() => { f = fixture(); });
afterEach(() => { f.close(); });

function report(snapshot: Snapshot | null, over: Partial<LimitsReportInput> = {}) {
  const r = buildLimitsReport({
    nowMs: f.clock.now() + 5, flexRaceSlots: 4, managedProviders: ['vendor_a', 'vendor_c'],
    snapshot, abuse, publishAbuseLimits: false, ...over,
  });
  assert.ok(validate(r), JSON.stringify(validate.errors));
  assert.deepEqual(JSON.parse(serializeLimitsReport(r)), r, 'serializer round trip');
  return r;
}

test('an ordinary organization: every figure from the snapshot, spend remaining = admission header', async () => {
  await fundedOrg(f, 'o', 7 * USD, 2 * USD);
  const h = okHold(await admit(f, 'o', 1 * USD));
  await f.ledger.settle(h, 500_000, f.clock.now());
  okHold(await admit(f, 'o', 2 * USD));
  const snap = await f.ledger.snapshot('o', f.clock.now());
  const r = report(snap);
  const next = await admit(f, 'o', 1);
  assert.ok(next.ok);
  assert.equal(r.managed!.spend_remaining_micro_usd, next.spendRemainingMicroUsd);
  assert.equal(r.as_of, next.asOfMs);
  assert.deepEqual(r, {
    object: 'limits',
    as_of: f.clock.now(),
    own_keys: { unlimited: true, flex_race_slots: { limit: 4, scope: 'organization', on_exceed: 'degrade_to_standard' } },
    managed: {
      providers: ['vendor_a', 'vendor_c'],
      serving: 'ok',
      paused_reason: null,
      binding: 'daily_spend', // 10 − 2.5 = 7.5 left today < balance 8.5
      spend_remaining_micro_usd: 7_500_000,
      currency: 'USD',
      balance: { remaining_micro_usd: 8_500_000, cash_micro_usd: 6_500_000, credit_micro_usd: 2 * USD, reserved_micro_usd: 2 * USD },
      daily_spend: {
        limit_micro_usd: 10 * USD, used_micro_usd: 2_500_000, remaining_micro_usd: 7_500_000, window: 'utc_day',
        resets_at: Date.UTC(2026, 10, 22) / 1000,
      },
      concurrency: { limit: 4, scope: 'organization', on_exceed: 'refuse' },
      ramp_week: 1,
      ramp_defaults: { concurrency: 4, daily_spend_micro_usd: 10 * USD },
      override_in_force: { concurrency: false, daily_spend: false },
      rates: [
        { name: 'direct', scope: 'pool', window_seconds: 60, limit: 1000, used: 2, on_exceed: 'refuse' },
        { name: 'cloud', scope: 'pool', window_seconds: 60, limit: 3, used: 0, on_exceed: 'refuse' },
      ],
    },
    abuse_limits: {
      counted_per_edge_location: true,
      request_body_bytes: 50_000_000,
      client_ip: { source: 'connection', trusted_proxies: 0 },
      rates: [
        { name: 'organization_requests', scope: 'organization', window_seconds: 60, limit: null, on_exceed: 'refuse' },
        { name: 'api_key_requests', scope: 'api_key', window_seconds: 60, limit: null, on_exceed: 'refuse' },
        { name: 'client_ip_requests', scope: 'client_ip', window_seconds: 60, limit: null, on_exceed: 'refuse' },
        { name: 'failed_authentications', scope: 'client_ip', window_seconds: 60, limit: null, on_exceed: 'refuse' },
      ],
    },
  });
});

test('binding daily_spend when the day has less room than the balance', async () => {
  await fundedOrg(f, 'o', 100 * USD);
  okHold(await admit(f, 'o', 4 * USD));
  const r = report(await f.ledger.snapshot('o', f.clock.now()));
  assert.equal(r.managed!.binding, 'daily_spend');
  assert.equal(r.managed!.spend_remaining_micro_usd, 6 * USD);
  assert.equal(r.managed!.daily_spend.remaining_micro_usd, 6 * USD);
});

test('paused: serving paused, binding paused, reason shown, no positive figure', async () => {
  await fundedOrg(f, 'o', 100 * USD);
  await f.ledger.startReview('o', f.clock.now());
  const r = report(await f.ledger.snapshot('o', f.clock.now()));
  assert.equal(r.managed!.serving, 'paused');
  assert.equal(r.managed!.binding, 'paused');
  assert.equal(r.managed!.paused_reason, 'account_under_review');
  assert.equal(r.managed!.spend_remaining_micro_usd, 0);
  assert.equal(r.managed!.balance.remaining_micro_usd, 100 * USD, 'the balance itself is still shown');

  await f.ledger.endReview('o', f.clock.now());
  okHold(await admit(f, 'o', 10 * USD));
  assert.equal((await admit(f, 'o', 1) as { code: string }).code, 'spend_velocity_exceeded');
  const v = report(await f.ledger.snapshot('o', f.clock.now()));
  assert.equal(v.managed!.paused_reason, 'spend_velocity_exceeded');
  assert.equal(v.managed!.binding, 'paused');
  assert.equal(v.managed!.daily_spend.remaining_micro_usd, 0);
});

test('paused: daily_spend.remaining is never positive (min(x, 0)); a negative figure stays as it is; the balance stays the money fact', async () => {
  await fundedOrg(f, 'o', 100 * USD);
  await f.ledger.startReview('o', f.clock.now());             // 10 USD of room today, but paused
  const r = report(await f.ledger.snapshot('o', f.clock.now()));
  assert.equal(r.managed!.serving, 'paused');
  assert.equal(r.managed!.daily_spend.remaining_micro_usd, 0);
  assert.equal(r.managed!.daily_spend.limit_micro_usd, 10 * USD);
  assert.equal(r.managed!.daily_spend.used_micro_usd, 0);
  assert.equal(r.managed!.balance.remaining_micro_usd, 100 * USD);

  await f.ledger.endReview('o', f.clock.now());
  await f.ledger.settle(okHold(await admit(f, 'o', 1)), 12 * USD, f.clock.now()); // 2 USD past the ceiling
  const over = report(await f.ledger.snapshot('o', f.clock.now()));
  assert.equal(over.managed!.paused_reason, 'spend_velocity_exceeded');
  assert.equal(over.managed!.daily_spend.remaining_micro_usd, -2 * USD, 'an overshoot is shown signed');

  const ok = report({ ...(await f.ledger.snapshot('o', f.clock.now())), serving: 'ok', pausedReason: null, binding: 'daily_spend' });
  assert.equal(ok.managed!.daily_spend.remaining_micro_usd, -2 * USD, 'not paused: the figure as it is');
  await f.ledger.setOverrides('o', { daily_spend_micro_usd: 15 * USD }, f.clock.now());
  assert.equal(report(await f.ledger.snapshot('o', f.clock.now())).managed!.daily_spend.remaining_micro_usd, 3 * USD);
});

test('a balance taken to zero or below by a settlement, or a ceiling reached, shows the pause before any request is refused', async () => {
  await fundedOrg(f, 'o', 1 * USD);
  await f.ledger.settle(okHold(await admit(f, 'o', 1)), 1 * USD, f.clock.now());
  const broke = report(await f.ledger.snapshot('o', f.clock.now())).managed!;
  assert.deepEqual([broke.serving, broke.paused_reason, broke.binding, broke.spend_remaining_micro_usd], ['paused', 'insufficient_balance', 'paused', 0]);

  await fundedOrg(f, 'p', 100 * USD);
  await f.ledger.settle(okHold(await admit(f, 'p', 1)), 10 * USD, f.clock.now());
  const spent = report(await f.ledger.snapshot('p', f.clock.now())).managed!;
  assert.deepEqual([spent.serving, spent.paused_reason, spent.binding, spent.spend_remaining_micro_usd, spent.daily_spend.remaining_micro_usd],
    ['paused', 'spend_velocity_exceeded', 'paused', 0, 0]);
  assert.equal(spent.balance.remaining_micro_usd, 90 * USD);
});

test('a negative balance is reported signed', async () => {
  await fundedOrg(f, 'o', 1 * USD);
  await f.ledger.settle(okHold(await admit(f, 'o', 1)), 3 * USD, f.clock.now());
  assert.equal((await admit(f, 'o', 1) as { code: string }).code, 'insufficient_balance');
  const r = report(await f.ledger.snapshot('o', f.clock.now()));
  assert.equal(r.managed!.paused_reason, 'insufficient_balance');
  assert.equal(r.managed!.spend_remaining_micro_usd, -2 * USD);
  assert.equal(r.managed!.balance.cash_micro_usd, -2 * USD);
});

test('exempt: binding exempt, ramp fields null, unbounded ceilings as MAX_SAFE_INTEGER', async () => {
  await fundedOrg(f, 'o', 100 * USD);
  await f.ledger.setExempt('o', true, f.clock.now());
  okHold(await admit(f, 'o', 3 * USD));
  const r = report(await f.ledger.snapshot('o', f.clock.now()));
  assert.equal(r.managed!.binding, 'exempt');
  assert.equal(r.managed!.spend_remaining_micro_usd, 100 * USD);
  assert.equal(r.managed!.ramp_week, null);
  assert.equal(r.managed!.ramp_defaults, null);
  assert.equal(r.managed!.override_in_force, null);
  assert.equal(r.managed!.daily_spend.limit_micro_usd, Number.MAX_SAFE_INTEGER);
  assert.equal(r.managed!.daily_spend.remaining_micro_usd, Number.MAX_SAFE_INTEGER - 3 * USD);
  assert.equal(r.managed!.concurrency.limit, Number.MAX_SAFE_INTEGER);
});

test('managed is null with no managed providers or no snapshot; as_of falls back to the service clock', async () => {
  await fundedOrg(f, 'o', 1 * USD);
  const snap = await f.ledger.snapshot('o', f.clock.now());
  const none = report(snap, { managedProviders: [] });
  assert.equal(none.managed, null);
  assert.equal(none.as_of, snap.asOfMs);
  const unread = report(null);
  assert.equal(unread.managed, null);
  assert.equal(unread.as_of, f.clock.now() + 5);
});

test('abuse limits are published only when asked', async () => {
  const r = report(null, { publishAbuseLimits: true, abuse: { ...abuse, client_ip_requests: null } });
  assert.deepEqual(r.abuse_limits.rates.map((x) => x.limit), [600, 300, null, 10]);
});

test('the schema refuses a report that breaks the spec', async () => {
  await fundedOrg(f, 'o', 1 * USD);
  const good = report(await f.ledger.snapshot('o', f.clock.now()));
  const bad = structuredClone(good) as unknown as { managed: { serving: string; currency: string } };
  bad.managed.serving = 'maybe';
  assert.equal(validate(bad), false);
  const fractional = structuredClone(good);
  fractional.managed!.balance.cash_micro_usd = 1.5;
  assert.equal(validate(fractional), false);
  const extra = { ...structuredClone(good), surprise: 1 };
  assert.equal(validate(extra), false);
});
