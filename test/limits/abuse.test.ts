// Per-instance abuse limits with an injected clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../lib/clock.ts';
import { AbuseLimiter } from '../../lib/limits/abuse.ts';
import { SlidingWindowCounter } from '../../lib/limits/window.ts';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0); // a minute boundary
const none = { organization_requests: null, api_key_requests: null, client_ip_requests: null, failed_authentications: null };

test('null limits are unlimited', () => {
  const l = new AbuseLimiter(none, new ManualClock(T0));
  for (let i = 0; i < 10_000; i++) {
    assert.deepEqual(l.checkIp('1.2.3.4'), { ok: true });
    assert.deepEqual(l.checkKey('org', 'key'), { ok: true });
    l.recordFailedAuth('1.2.3.4');
  }
});

test('client_ip_requests: refused past the limit, per IP, with Retry-After seconds', () => {
  const clock = new ManualClock(T0 + 10_000);
  const l = new AbuseLimiter({ ...none, client_ip_requests: 3 }, clock);
  for (let i = 0; i < 3; i++) assert.deepEqual(l.checkIp('a'), { ok: true });
  assert.deepEqual(l.checkIp('a'), { ok: false, retryAfterS: 51 }); // 50 s to the next window + 1 ms, rounded up
  assert.deepEqual(l.checkIp('b'), { ok: true }, 'other IPs are counted apart');
});

test('organization_requests and api_key_requests: both must pass; a refusal is not counted', () => {
  const clock = new ManualClock(T0);
  const l = new AbuseLimiter({ ...none, organization_requests: 5, api_key_requests: 2 }, clock);
  assert.deepEqual(l.checkKey('org', 'k1'), { ok: true });
  assert.deepEqual(l.checkKey('org', 'k1'), { ok: true });
  assert.equal(l.checkKey('org', 'k1').ok, false, 'key limit');
  assert.deepEqual(l.checkKey('org', 'k2'), { ok: true });
  assert.deepEqual(l.checkKey('org', 'k2'), { ok: true });
  assert.deepEqual(l.checkKey('org', 'k3'), { ok: true }); // org: 5 counted (the refused one was not)
  const r = l.checkKey('org', 'k4');
  assert.equal(r.ok, false, 'organization limit, although k4 is fresh');
  assert.deepEqual(l.checkKey('other', 'k5'), { ok: true });
  clock.advance(120_000);
  assert.deepEqual(l.checkKey('org', 'k1'), { ok: true }, 'all forgotten after two windows');
});

test('failed authentications lock the IP out, even with a good key, until the window frees', () => {
  const clock = new ManualClock(T0 + 30_000);
  const l = new AbuseLimiter({ ...none, failed_authentications: 2, client_ip_requests: 100 }, clock);
  assert.deepEqual(l.checkIp('evil'), { ok: true });
  l.recordFailedAuth('evil');
  assert.deepEqual(l.checkIp('evil'), { ok: true });
  l.recordFailedAuth('evil');
  // Two failures reached the limit: the next request is refused before its key is read.
  assert.deepEqual(l.checkIp('evil'), { ok: false, retryAfterS: 31 }); // 30 s to the next window + 1 ms, rounded up
  assert.deepEqual(l.checkIp('good'), { ok: true });
  clock.set(T0 + 60_000);             // the two failures now weigh 2 × 60/60 = 2: still locked
  assert.equal(l.checkIp('evil').ok, false);
  clock.set(T0 + 60_001);             // 2 × 59 999/60 000 < 2: the window frees (within the 31 s given)
  assert.deepEqual(l.checkIp('evil'), { ok: true });
  l.recordFailedAuth('evil');
  assert.equal(l.checkIp('evil').ok, false, 'one more failure locks it again');
});

test('sliding window: the previous window weighs in proportionally and retryAfterS is exact', () => {
  const clock = new ManualClock(T0);
  const c = new SlidingWindowCounter(10, clock);
  for (let i = 0; i < 10; i++) assert.equal(c.take('k'), 0);
  assert.equal(c.take('k'), 61, 'full: wait for the next window and 1 ms of it (60.001 s rounds up)');
  clock.set(T0 + 60_000);             // 10 × 60/60 = 10: still full, frees 1 ms later
  assert.equal(c.take('k'), 1);
  clock.set(T0 + 66_000);             // 10 × 54/60 = 9 < 10
  assert.equal(c.take('k'), 0);       // 9 + 1 = 10: full again until 6 s have slid by
  assert.equal(c.take('k'), 1);
  clock.set(T0 + 66_001);             // 8.9998 + 1 < 10
  assert.equal(c.take('k'), 0);
  assert.equal(c.take('k'), 6);       // 10 × (60 − e)/60 + 2 < 10 needs e > 12 s: 6 s from 6.001 s
  clock.set(T0 + 72_000);
  assert.equal(c.take('k'), 1, 'at exactly e = 12 s the estimate is 8 + 2 = 10: not yet');
  clock.set(T0 + 72_001);
  assert.equal(c.take('k'), 0);
  clock.set(T0 + 180_000);
  for (let i = 0; i < 10; i++) assert.equal(c.take('k'), 0, 'two windows later nothing remains');
});

test('retryAfterS is at least 1 and waiting that long is always enough', () => {
  for (const start of [T0, T0 + 1, T0 + 29_999, T0 + 59_999]) {
    for (const limit of [1, 3, 7]) {
      const clock = new ManualClock(start);
      const c = new SlidingWindowCounter(limit, clock);
      let at = start;
      for (let round = 0; round < 20; round++) {
        while (c.take('k') === 0) { /* fill */ }
        const wait = c.wait('k');
        assert.ok(wait >= 1);
        at += wait * 1000;
        clock.set(at);
        assert.equal(c.wait('k'), 0, `limit ${limit}, round ${round}`);
      }
    }
  }
});

test('memory is bounded: idle keys are swept, and a hard cap evicts the oldest', () => {
  const clock = new ManualClock(T0);
  const c = new SlidingWindowCounter(5, clock, 60_000, 1000);
  for (let i = 0; i < 500; i++) c.take(`ip-${i}`);
  assert.equal(c.size, 500);
  clock.advance(120_000);
  for (let i = 0; i < 300; i++) c.take(`new-${i}`); // each call sweeps up to two stale keys
  assert.equal(c.size, 300);
  for (let i = 0; i < 2000; i++) c.take(`flood-${i}`);
  assert.ok(c.size <= 1000);
});

test('organization_api_requests: its own count per organization, apart from checkKey; absent or null is unlimited', () => {
  const clock = new ManualClock(T0 + 30_000);
  const l = new AbuseLimiter({ ...none, organization_requests: 100, organization_api_requests: 2 }, clock);
  assert.deepEqual(l.checkOrganizationApi('org'), { ok: true });
  assert.deepEqual(l.checkOrganizationApi('org'), { ok: true });
  assert.deepEqual(l.checkOrganizationApi('org'), { ok: false, retryAfterS: 31 });
  assert.deepEqual(l.checkOrganizationApi('other'), { ok: true }, 'per organization');
  assert.deepEqual(l.checkKey('org', 'k'), { ok: true }, 'inference and the key rates are counted apart');
  clock.advance(120_000);
  assert.deepEqual(l.checkOrganizationApi('org'), { ok: true });
  for (const unlimited of [new AbuseLimiter(none, clock), new AbuseLimiter({ ...none, organization_api_requests: null }, clock)]) {
    for (let i = 0; i < 1_000; i++) assert.deepEqual(unlimited.checkOrganizationApi('org'), { ok: true });
  }
});
