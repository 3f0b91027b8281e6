// Skipping a JSON value without parsing it: the end is found through strings holding quotes,
// backslashes and brackets, and emptying the bulk leaves every other field as JSON.parse reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { RECORDED, recordedFiles, recordedOnly } from './helpers/recorded.ts';
import { endOfJsonValue, pickMembers, withMemberIn, withoutBulk, withoutString, type MemberPick } from '../lib/json-skip.ts';
import { responsesTap } from '../lib/formats/responses/tap.ts';
import { zeroUsage } from '../lib/ir.ts';
import type { TapState } from '../lib/formats/types.ts';

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

test('withoutString empties only the first string value of the key, through quotes and backslashes', () => {
  const tricky = ['', 'a"b', 'c\\', '\\"', '"text":"', '\\\\"x', 'é ✓ \n \u0000'];
  for (const s of tricky) {
    const event = { type: 'response.output_text.done', item_id: s, output_index: 0, content_index: 1, text: s, logprobs: [{ text: s }] };
    const frame = JSON.stringify(event);
    assert.deepEqual(JSON.parse(withoutString(frame, '"text":"')), { ...event, text: '' }, JSON.stringify(s));
  }
  assert.equal(withoutString('{"a":1}', '"text":"'), '{"a":1}');
});

/** Seeded random JSON: strings full of quotes, backslashes, brackets, separators, spaces, new
 *  lines and non-ASCII characters; numbers, booleans, null; arrays and objects three deep. */
function randomJson(seed: number): { rand: () => number; str: () => string; value: (depth: number) => unknown } {
  let x = seed;
  const rand = (): number => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const chars = '"\\[]{},:a é✓\n';
  const str = (): string => Array.from({ length: Math.floor(rand() * 12) }, () => chars[Math.floor(rand() * chars.length)]).join('');
  const value = (depth: number): unknown => {
    const r = rand();
    if (depth > 2 || r < 0.3) return [str(), Math.floor(rand() * 1e6) / 100, -3e-7, true, false, null][Math.floor(rand() * 6)];
    if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(rand() * 4) }, () => [str(), value(depth + 1)]));
  };
  return { rand, str, value };
}

test('spliceMembers: kept members as they were, set ones added; JSON.parse reads { ...kept, ...set }', async () => {
  const { spliceMembers } = await import('../lib/json-skip.ts');
  for (let seed = 1; seed <= 300; seed++) {
    const { rand, str, value } = randomJson(seed);
    const body: Record<string, unknown> = { model: 'm', input: value(0), start_within: 'now', stream: rand() < 0.5, [str()]: value(0), tools: value(0) };
    const text = rand() < 0.5 ? JSON.stringify(body) : JSON.stringify(body, null, rand() < 0.5 ? 2 : '\t');
    const drop = new Set(['start_within', 'provider']);
    const set = { model: 'route-model', stream: true, service_tier: rand() < 0.5 ? 'flex' : undefined };
    const out = JSON.parse(spliceMembers(Buffer.from(text), (k) => !drop.has(k), set).toString('utf8'));
    const { start_within: _s, ...kept } = body;
    const expected: Record<string, unknown> = { ...kept, model: 'route-model', stream: true };
    if (set.service_tier) expected.service_tier = 'flex';
    assert.deepEqual(out, expected, `seed ${seed}`);
  }
  assert.equal(spliceMembers(Buffer.from('{}'), () => true, { a: 1 }).toString(), '{"a":1}');
  assert.equal(spliceMembers(Buffer.from(' { "a" : 1 } '), () => false, {}).toString(), '{}');
});

test('a large body is walked once: every attempt of a request (flex, then standard) reuses its spans', async () => {
  const { spliceMembers, topLevelMembers, topLevelMembersOf } = await import('../lib/json-skip.ts');
  const big = Buffer.from(JSON.stringify({ model: 'm', input: [{ text: 'x "y" '.repeat(4_000) }], start_within: 'now' }));
  const spans = topLevelMembersOf(big);
  assert.equal(topLevelMembersOf(big), spans, 'the same spans, not a second walk');
  assert.deepEqual(spans, topLevelMembers(big));
  const small = Buffer.from('{"a":1}');
  assert.notEqual(topLevelMembersOf(small), topLevelMembersOf(small), 'a small body is walked each time, nothing kept');
  const keep = (key: string): boolean => key !== 'start_within';
  const { start_within: _s, ...kept } = JSON.parse(big.toString());
  assert.deepEqual(JSON.parse(spliceMembers(big, keep, { service_tier: 'flex' }).toString()), { ...kept, service_tier: 'flex' });
  assert.deepEqual(JSON.parse(spliceMembers(big, keep, { service_tier: undefined }).toString()), kept);
});

// pickMembers against JSON.parse: what it takes must be exactly what a parse would give.
const SPEC: MemberPick = { type: true, response: { usage: true, service_tier: true } };
const reference = (text: string): unknown => {
  const data = JSON.parse(text);
  const out: Record<string, unknown> = {};
  if ('type' in data) out.type = data.type;
  if ('response' in data) {
    const r = data.response;
    out.response = r !== null && typeof r === 'object' && !Array.isArray(r)
      ? Object.fromEntries(['usage', 'service_tier'].filter((k) => k in r).map((k) => [k, r[k]])) : r;
  }
  return out;
};

test('pickMembers takes the named members exactly as JSON.parse reads them, skipping the rest', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const { rand, str, value } = randomJson(seed);
    const response: Record<string, unknown> = {
      id: str(), instructions: str(), tools: value(0), output: [value(0), value(0)], metadata: { usage: value(0), service_tier: str() },
      service_tier: rand() < 0.5 ? 'flex' : str(), usage: { input_tokens: seed, output_tokens: 2 * seed, input_tokens_details: { cached_tokens: 1 } },
    };
    if (rand() < 0.2) delete response.usage;
    const frame = { type: str(), sequence_number: seed, [str()]: value(0), response };
    const text = JSON.stringify(frame, null, seed % 3 === 0 ? 2 : undefined);
    assert.deepEqual(pickMembers(text, SPEC), reference(text), text);
  }
});

test('pickMembers: escaped keys, repeated keys, non-object members and empty objects read as JSON.parse reads them', () => {
  for (const text of [
    '{"\\u0074ype":"x","response":{"usage":{"a":1}}}',
    '{"type":"a","type":"b","response":{"usage":1,"usage":2}}',
    '{"type":"a","response":null}',
    '{"type":"a","response":[{"usage":1}]}',
    '{"response":{}}',
    '{}',
    ' \n{ "type" : "a" , "response" : { "service_tier" : "flex" } } ',
    '{"type":"a","response":{"usage":{"input_tokens":1},"service_tier":"default"},"usage":{"wrong":1}}',
  ]) assert.deepEqual(pickMembers(text, SPEC), reference(text), text);
});

test('pickMembers: text that is not an object, or ends early, gives undefined; a picked value that is not JSON throws', () => {
  for (const text of ['', '[1]', '"x"', '{"type":"a"', '{"type":"a",', '{"type" "a"}', '{"type":"a" "b":1}', '{"response":{"usage":1}', '{"x":[1,2}', '{"x":"abc}'])
    assert.equal(pickMembers(text, SPEC), undefined, text);
  assert.throws(() => pickMembers('{"type":tru}', SPEC), SyntaxError);
  assert.throws(() => pickMembers('{"response":{"usage":{"a":1,}}}', SPEC), SyntaxError);
});

test('pickMembers reads a picked number as JSON.parse does, and refuses what it refuses', () => {
  const spec: MemberPick = { n: true };
  for (const n of ['0', '7', '12', '999999999999999', '1000000000000000', '9007199254740993', '-5', '-0', '1.5', '1e3', '2E-2', '0.0'])
    assert.deepEqual(pickMembers(`{"n":${n}}`, spec), { n: JSON.parse(n) }, n);
  for (const n of ['01', '00', '1.', '+1', '1x'])
    assert.throws(() => pickMembers(`{"n":${n}}`, spec), SyntaxError, n);
});

test('the Responses tap reads the same usage and tier from its picked members as from the parsed frame', () => {
  for (let seed = 1; seed <= 200; seed++) {
    const { rand, str, value } = randomJson(seed);
    const n = (): number => Math.floor(rand() * 10 ** Math.floor(rand() * 12));
    const usage: Record<string, unknown> = {
      input_tokens: n(), output_tokens: n(), total_tokens: n(), extra: value(0),
      input_tokens_details: rand() < 0.8 ? { cached_tokens: n(), ...(rand() < 0.3 ? { cache_write_tokens: n() } : {}) } : null,
      output_tokens_details: rand() < 0.8 ? { reasoning_tokens: n(), [str()]: value(0) } : undefined,
    };
    const frame = { type: 'response.completed', response: { id: str(), output: [value(0)], service_tier: rand() < 0.5 ? 'flex' : 'default', usage } };
    const text = JSON.stringify(frame, null, seed % 4 === 0 ? 2 : undefined);
    const whole = { usage: zeroUsage(), sawUsage: false } as TapState;
    const picked = { usage: zeroUsage(), sawUsage: false } as TapState;
    responsesTap.read(JSON.parse(text), whole);
    const data = pickMembers(text, responsesTap.idPick!);
    responsesTap.read(data, picked);
    assert.deepEqual(picked, whole, text);
    assert.equal(responsesTap.isFinal({ event: 'response.completed', data: text }, data), true);
  }
});

// The recorded Responses streams (when ../shared is beside the project): each event read as a parse reads it.
test('pickMembers reads every recorded Responses event as JSON.parse does', recordedOnly, () => {
  let seen = 0;
  for (const file of recordedFiles('openai-responses', '.txt')) {
    for (const line of readFileSync(`${RECORDED}/openai-responses/${file}`, 'utf8').split('\n')) {
      const at = line.indexOf('{"type":"response.');
      if (at === -1) continue;
      const data = line.slice(at);
      try { JSON.parse(data); } catch { continue; }
      assert.deepEqual(pickMembers(data, SPEC), reference(data), `${file}: ${data.slice(0, 80)}`);
      seen++;
    }
  }
  assert.ok(seen >= 5, `only ${seen} events found`);
});

test('withMemberIn adds a member last in a top-level object member, every other byte as it was', () => {
  const body = '{"id":"r_1","output":[{"text":"\\"usage\\": {}"}],"usage":{"input_tokens":3, "output_tokens":5 } ,"user":null}';
  const out = withMemberIn(Buffer.from(body), 'usage', 'cost', { total_micro_usd: 12, currency: 'USD' })!.toString();
  assert.equal(out, body.replace('"output_tokens":5 }', '"output_tokens":5 ,"cost":{"total_micro_usd":12,"currency":"USD"}}'));
  assert.deepEqual(JSON.parse(out).usage.cost, { total_micro_usd: 12, currency: 'USD' });
  assert.equal(withMemberIn(Buffer.from('{"usage":{ }}'), 'usage', 'cost', 1)!.toString(), '{"usage":{ "cost":1}}');
  assert.equal(withMemberIn(Buffer.from('{"usage":null}'), 'usage', 'cost', 1), undefined, 'not an object');
  assert.equal(withMemberIn(Buffer.from('{"meta":{"usage":{}}}'), 'usage', 'cost', 1), undefined, 'only a top-level member');
  // Found from the end, or by the walk when the last one is nested or a key's escaped quote.
  const nestedLast = '{"usage":{"a":1},"metadata":{"usage":{"b":2}}}';
  assert.equal(withMemberIn(Buffer.from(nestedLast), 'usage', 'cost', 1)!.toString(), '{"usage":{"a":1,"cost":1},"metadata":{"usage":{"b":2}}}');
  const inArray = '{"usage":{"a":1},"list":[{"usage":{"b":2}}]}';
  assert.equal(withMemberIn(Buffer.from(inArray), 'usage', 'cost', 1)!.toString(), '{"usage":{"a":1,"cost":1},"list":[{"usage":{"b":2}}]}');
  const escapedKey = '{"usage":{"a":1},"x\\"usage":{"b":2}}';
  assert.deepEqual(JSON.parse(withMemberIn(Buffer.from(escapedKey), 'usage', 'cost', 1)!.toString()), { usage: { a: 1, cost: 1 }, 'x"usage': { b: 2 } });
  assert.equal(withMemberIn(Buffer.from(' {"id":1, "usage": {"a":"}"} } \n'), 'usage', 'cost', 1)!.toString(), ' {"id":1, "usage": {"a":"}","cost":1} } \n');
});
