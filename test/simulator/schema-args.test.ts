// The tool-argument generator: values satisfy the schema, deterministically.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argsForSchema, SCHEMA_MAX, valueForSchema } from '../../lib/simulator/schema-args.ts';
import { Rng } from '../../lib/simulator/rng.ts';
import { assertSatisfies } from './helpers.ts';

const SCHEMAS: Record<string, object> = {
  empty: { type: 'object', properties: {} },
  flat: {
    type: 'object',
    properties: {
      s: { type: 'string', minLength: 12, maxLength: 20 }, n: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
      i: { type: 'integer', minimum: -5, maximum: -2 }, b: { type: 'boolean' }, e: { enum: ['a', 'b', 3] },
      c: { const: 'fixed' }, when: { type: 'string', format: 'date-time' }, mail: { type: 'string', format: 'email' },
    },
    required: ['s', 'n', 'i', 'b', 'e', 'c'],
    additionalProperties: false,
  },
  nested: {
    type: 'object',
    properties: {
      items: {
        type: 'array', minItems: 2, maxItems: 4,
        items: { type: 'object', properties: { id: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['id'] },
      },
      maybe: { type: ['string', 'null'] },
      choice: { anyOf: [{ type: 'null' }, { type: 'object', properties: { k: { type: 'number' } }, required: ['k'] }] },
    },
    required: ['items', 'maybe', 'choice'],
  },
  refs: {
    type: 'object',
    $defs: { point: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] } },
    properties: { from: { $ref: '#/$defs/point' }, to: { $ref: '#/$defs/point' } },
    required: ['from', 'to'],
  },
  allOf: {
    allOf: [
      { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
      { properties: { b: { type: 'integer', multipleOf: 5, minimum: 7 } }, required: ['b'] },
    ],
  },
  noSchema: {},
};

for (const [name, schema] of Object.entries(SCHEMAS)) {
  test(`arguments satisfy the "${name}" schema for many seeds`, () => {
    for (let seed = 1; seed <= 25; seed++) {
      const value = argsForSchema(schema, new Rng(seed));
      assert.equal(typeof value, 'object');
      assertSatisfies(schema, value);
    }
  });
}

test('same seed → same arguments', () => {
  assert.deepEqual(argsForSchema(SCHEMAS.nested, new Rng(42)), argsForSchema(SCHEMAS.nested, new Rng(42)));
});

// A caller writes the schema and the simulator runs inside the gateway on `make run`: what one
// schema can ask for is bounded (SCHEMA_MAX); past a bound the value is what fits.
const timed = <T>(run: () => T): { value: T; ms: number } => {
  const t0 = performance.now();
  const value = run();
  return { value, ms: performance.now() - t0 };
};
const nestedArrays = (levels: number, minItems: number): object =>
  levels === 0 ? { type: 'integer' } : { type: 'array', minItems, items: nestedArrays(levels - 1, minItems) };

test('minItems 1000 three levels deep (a billion integers asked for) gives a small value at once', () => {
  for (const schema of [nestedArrays(3, 1000), nestedArrays(4, 40), { type: 'array', minItems: 2_000_000, items: { type: 'integer' } }]) {
    const { value, ms } = timed(() => JSON.stringify(valueForSchema(schema, new Rng(1))));
    assert.ok(value.length < 1024 * 1024, `${value.length} characters`);
    assert.ok(ms < 1_000, `${ms} ms`);
  }
  const items = valueForSchema({ type: 'array', minItems: 1e9, items: { type: 'integer' } }, new Rng(1)) as unknown[];
  assert.equal(items.length, SCHEMA_MAX.items);
});

test('a schema that refers to itself through anyOf, oneOf, allOf or array items gives a value, never a stack overflow', () => {
  const schemas = [
    { anyOf: [{ $ref: '#' }] }, { oneOf: [{ allOf: [{ $ref: '#' }] }] }, { allOf: [{ $ref: '#' }] },
    { type: 'array', minItems: 1, items: { $ref: '#' } }, { type: 'array', minItems: 64, items: { anyOf: [{ $ref: '#' }] } },
    { type: 'object', properties: { a: { $ref: '#' }, b: { anyOf: [{ $ref: '#/properties/b' }] } }, required: ['a', 'b'] },
  ];
  for (const schema of schemas) {
    const { value, ms } = timed(() => JSON.stringify(argsForSchema(schema, new Rng(3))));
    assert.ok(value.length < 1024 * 1024, `${JSON.stringify(schema)}: ${value.length} characters`);
    assert.ok(ms < 1_000, `${JSON.stringify(schema)}: ${ms} ms`);
  }
});

test('strings, const and enum values and property names count against the budget', () => {
  const big = 'x'.repeat(100_000);
  const grid = (items: object): object => ({ type: 'array', minItems: 64, items: { type: 'array', minItems: 64, items } });
  for (const items of [{ type: 'string', minLength: 1e9 }, { const: big }, { const: { big } }, { enum: [big] },
    { type: 'object', properties: { [big]: { type: 'integer' } }, required: [big] }]) {
    const { value, ms } = timed(() => JSON.stringify(valueForSchema(grid(items), new Rng(1))));
    assert.ok(value.length < 1024 * 1024, `${JSON.stringify(items).slice(0, 60)}: ${value.length} characters`);
    assert.ok(ms < 1_000, `${ms} ms`);
  }
  const long = valueForSchema({ type: 'string', minLength: 1e9 }, new Rng(1)) as string;
  assert.ok(long.length >= SCHEMA_MAX.length && long.length < SCHEMA_MAX.length + 64, `${long.length} characters`);
});

test('a property named "__proto__" or "constructor" is an own property like any other', () => {
  const schema = JSON.parse('{"type":"object","required":["__proto__","constructor"],"properties":{"__proto__":{"type":"integer"}}}');
  const value = argsForSchema(schema, new Rng(1)) as Record<string, unknown>;
  assert.deepEqual(Object.keys(value), ['__proto__', 'constructor']);
  assert.equal(typeof value.__proto__, 'number');
  assertSatisfies(schema, value);
  assert.equal(typeof valueForSchema({ $ref: '#/__proto__' }, new Rng(1)), 'string', 'a $ref to a prototype member resolves to nothing');
});
