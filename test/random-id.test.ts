// Ids from the pooled random source: the asked number of bytes in the asked encoding, and no two
// alike across many refills of the pool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomString } from '../lib/random-id.ts';

test('each id has its bytes in its encoding, and none repeats across refills of the pool', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2_000; i++) {   // 2,000 × 24 bytes: the 4 KiB pool is refilled a dozen times
    const hex = randomString(24, 'hex');
    assert.match(hex, /^[0-9a-f]{48}$/);
    const b64 = randomString(18, 'base64url');
    assert.match(b64, /^[A-Za-z0-9_-]{24}$/);
    seen.add(hex).add(b64);
  }
  assert.equal(seen.size, 4_000);
});

test('an id that does not fit in what is left of the pool comes whole from a fresh one', () => {
  // 37 bytes do not divide 4,096: ids of this size keep landing at the pool's end.
  const ids = Array.from({ length: 300 }, () => randomString(37, 'hex'));
  for (const id of ids) assert.match(id, /^[0-9a-f]{74}$/);
  assert.equal(new Set(ids).size, ids.length);
});
