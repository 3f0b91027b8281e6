// The tool-argument generator: values satisfy the schema, deterministically.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argsForSchema } from '../../lib/simulator/schema-args.ts';
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
