// cloud_a's streamed function-call arguments (lib/formats/vertex/partial-args.ts): Vertex names each
// piece by a JSON path of the model's own argument keys. A key a model names "__proto__",
// "constructor" or "prototype" is an ordinary argument (the caller gets it as sent) and reaches no
// object of the process: a "$.__proto__.x" once wrote onto Object.prototype, the call arrived as
// {}, and the next request crashed the process. (Here, not under test/formats: cloud_a's piece.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartialArgs } from '../../lib/formats/vertex/partial-args.ts';

/** Object.prototype and Array.prototype hold nothing new after `run`. */
function assertNoPollution(run: () => void): void {
  const before = [Object.getOwnPropertyNames(Object.prototype).length, Object.getOwnPropertyNames(Array.prototype).length];
  try {
    run();
    assert.equal(({} as any).x, undefined, 'no object gained an x');
    assert.equal(({} as any).isAdmin, undefined, 'no object gained an isAdmin');
    assert.equal(([] as any).x, undefined, 'no array gained an x');
    assert.deepEqual([Object.getOwnPropertyNames(Object.prototype).length, Object.getOwnPropertyNames(Array.prototype).length], before);
  } finally {
    delete (Object.prototype as any).x; delete (Object.prototype as any).isAdmin; delete (Array.prototype as any).x;
  }
}

test('a path through __proto__ (dotted or bracketed) is an own key of the arguments; Object.prototype is untouched', () => {
  assertNoPollution(() => {
    const args = new PartialArgs();
    args.apply([
      { jsonPath: '$.query', stringValue: 'weather' },
      { jsonPath: '$.__proto__.isAdmin', boolValue: true },
      { jsonPath: "$['__proto__'].x", stringValue: 'a', willContinue: true },
      { jsonPath: "$['__proto__'].x", stringValue: 'b' },
      { jsonPath: '$["__proto__"]["__proto__"].x', numberValue: 1 },
    ]);
    assert.equal(args.json(), '{"query":"weather","__proto__":{"isAdmin":true,"x":"ab","__proto__":{"x":1}}}');
    const parsed = JSON.parse(args.json());
    assert.deepEqual(Object.keys(parsed), ['query', '__proto__'], 'the caller reads __proto__ as an own key');
  });
});

test('constructor and prototype are ordinary argument names, at the top and nested', () => {
  assertNoPollution(() => {
    const args = new PartialArgs();
    args.apply([
      { jsonPath: '$.constructor', stringValue: 'Point' },
      { jsonPath: '$.prototype.x', numberValue: 2 },
      { jsonPath: '$.shape.constructor.prototype.x', stringValue: 'deep' },
      { jsonPath: '$.list[0].constructor', nullValue: 'NULL_VALUE' },
    ]);
    assert.equal(args.json(), '{"constructor":"Point","prototype":{"x":2},"shape":{"constructor":{"prototype":{"x":"deep"}}},"list":[{"constructor":null}]}');
  });
});

test('the first part\'s args may name __proto__ too: kept as sent, and what follows is added to them', () => {
  assertNoPollution(() => {
    const initial = JSON.parse('{"__proto__":{"x":1},"keep":[1,{"a":2}]}');
    const args = new PartialArgs(initial);
    args.apply([{ jsonPath: '$.__proto__.y', numberValue: 2 }, { jsonPath: '$.keep[1].b', boolValue: false }]);
    assert.equal(args.json(), '{"__proto__":{"x":1,"y":2},"keep":[1,{"a":2,"b":false}]}');
    assert.deepEqual(initial, JSON.parse('{"__proto__":{"x":1},"keep":[1,{"a":2}]}'), 'the part read is not changed');
  });
});

test('an array takes index keys only, up to its next element: a name on it, or a far index, is left out', () => {
  assertNoPollution(() => {
    const args = new PartialArgs();
    args.apply([
      { jsonPath: '$.a[0]', stringValue: 'first' },
      { jsonPath: '$.a.__proto__.x', stringValue: 'no' },
      { jsonPath: '$.a.x', stringValue: 'no' },
      { jsonPath: '$.a[1]', stringValue: 'second' },
      { jsonPath: '$.a[1000000000]', stringValue: 'no' },
    ]);
    assert.equal(args.json(), '{"a":["first","second"]}');
  });
});
