// start_within parsing: "now", two-digit HHh-MMm-SSs up to 10 minutes, everything else refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_START_WITHIN_MS, parseStartWithin } from '../../lib/routing/start-within.ts';
import { GatewayError } from '../../lib/errors.ts';

test('"now" and durations', () => {
  assert.deepEqual(parseStartWithin('now'), { kind: 'now' });
  assert.deepEqual(parseStartWithin('00h-00m-00s'), { kind: 'duration', ms: 0 });
  assert.deepEqual(parseStartWithin('00h-00m-30s'), { kind: 'duration', ms: 30_000 });
  assert.deepEqual(parseStartWithin('00h-02m-05s'), { kind: 'duration', ms: 125_000 });
  assert.deepEqual(parseStartWithin('00h-10m-00s'), { kind: 'duration', ms: MAX_START_WITHIN_MS });
  assert.equal(MAX_START_WITHIN_MS, 600_000);
});

test('malformed, out-of-range and over-long values are invalid_start_within on param start_within', () => {
  const bad = ['NOW', 'now ', '', '30s', '0h-0m-30s', '00h-00m-030s', '00h-00m-60s', '00h-60m-00s', '00h-10m-01s', '01h-00m-00s',
    '00h 00m 30s', '00:00:30', '-0h-00m-30s'];
  for (const v of [...bad, 30, null, undefined, {}, ['now']]) {
    assert.throws(() => parseStartWithin(v), (e: unknown) => {
      assert.ok(e instanceof GatewayError, String(v));
      assert.equal(e.code, 'invalid_start_within', JSON.stringify(v));
      assert.equal(e.param, 'start_within');
      assert.equal(e.status, 400);
      return true;
    });
  }
  assert.match((() => { try { parseStartWithin('00h-11m-00s'); } catch (e) { return (e as Error).message; } return ''; })(), /longer than 10 minutes/);
});
