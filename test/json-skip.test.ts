// Skipping a JSON value without parsing it: the end is found through strings holding quotes,
// backslashes and brackets, and emptying the bulk leaves every other field as JSON.parse reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { endOfJsonValue, withoutBulk } from '../lib/json-skip.ts';

test('the end of an array or object is found through tricky strings', () => {
  const tricky = ['a"b', 'c\\', '\\"', '[{]}', '\\\\"x', 'é ✓ \n \u0000'];
  for (const s of tricky) {
    const text = JSON.stringify({ before: 1, output: [{ text: s, nested: [s, { s }] }], after: s });
    const open = text.indexOf('[');
    const end = endOfJsonValue(text, open);
    assert.deepEqual(JSON.parse(text.slice(open, end)), [{ text: s, nested: [s, { s }] }], JSON.stringify(s));
  }
  assert.equal(endOfJsonValue('{"a":[1,2', 5), -1, 'unclosed');
});

test('withoutBulk empties only the first value of the key; the rest parses as before', () => {
  for (let seed = 1; seed <= 200; seed++) {
    let x = seed;
    const rand = (): number => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const str = (): string => Array.from({ length: Math.floor(rand() * 12) }, () => '"\\[]{}a é'[Math.floor(rand() * 9)]).join('');
    const item = (): unknown => (rand() < 0.5 ? { type: 'message', content: [{ text: str() }] } : [str(), Math.floor(rand() * 100), null]);
    const response = {
      id: 'resp_1', instructions: str(), output: Array.from({ length: Math.floor(rand() * 5) }, item),
      service_tier: 'flex', usage: { input_tokens: seed, output_tokens: 2 * seed, input_tokens_details: { cached_tokens: 1 } }, metadata: { note: str() },
    };
    const frame = JSON.stringify({ type: 'response.completed', response });
    assert.deepEqual(JSON.parse(withoutBulk(frame, '"output":[')), { type: 'response.completed', response: { ...response, output: [] } });
  }
  assert.equal(withoutBulk('{"a":1}', '"output":['), '{"a":1}');
});
