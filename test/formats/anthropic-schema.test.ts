// toAnthropicSchema: a caller's JSON Schema narrowed to Anthropic's structured-output subset, the
// same result as @anthropic-ai/sdk's transformJSONSchema for what that SDK sends, and no throw for
// what other callers send (no type, type lists, draft-07 definitions).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { zodResponseFormat } from 'openai/helpers/zod';
import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';
import { z } from 'zod';
import { toAnthropicSchema } from '../../lib/formats/anthropic-schema.ts';

const ORDER = z.object({
  quantity: z.number().int(),
  sku: z.string().min(3).max(12),
  lines: z.array(z.string()).min(2),
  one: z.array(z.number().multipleOf(2)).min(1).max(4),
  contact: z.string().email(),
  day: z.string().date(),
  note: z.string().nullable(),
  kind: z.enum(['a', 'b']),
  address: z.object({ city: z.string(), zip: z.string().regex(/^\d{5}$/) }).describe('Where to send it'),
});

test('an OpenAI helper schema (zod .int(), lengths, pattern): same result as the Anthropic SDK transform', () => {
  const schema = zodResponseFormat(ORDER, 'order').json_schema.schema as Record<string, unknown>;
  const before = JSON.stringify(schema);
  const out = toAnthropicSchema(schema);
  assert.equal(JSON.stringify(schema), before, 'the caller schema is not changed');
  assert.deepEqual(out, transformJSONSchema(schema as any));
  const text = JSON.stringify(out);
  for (const key of ['$schema', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'multipleOf', 'maxItems']) {
    assert.equal(text.includes(`"${key}"`), false, `${key} is not a keyword of the result`);
  }
  const props = out.properties as Record<string, any>;
  assert.deepEqual(props.quantity, { type: 'integer', description: '{minimum: -9007199254740991, maximum: 9007199254740991}' });
  assert.equal(props.lines.minItems, undefined);
  assert.equal(props.one.minItems, 1);
  assert.equal(props.contact.format, 'email');
  assert.equal(props.address.additionalProperties, false);
  assert.equal(props.address.description, 'Where to send it');
  assert.deepEqual(props.address.properties.zip, { type: 'string', description: '{pattern: "^\\\\d{5}$"}' });
});

test('an object without additionalProperties is closed; unknown keywords and formats go to the description', () => {
  const out = toAnthropicSchema({
    type: 'object', properties: { city: { type: 'string', format: 'postal' }, rank: { type: 'integer', minimum: 1 } },
    required: ['city'], propertyOrdering: ['city', 'rank'],
  });
  assert.deepEqual(out, {
    type: 'object',
    properties: { city: { type: 'string', description: '{format: "postal"}' }, rank: { type: 'integer', description: '{minimum: 1}' } },
    additionalProperties: false,
    required: ['city'],
    description: '{propertyOrdering: ["city","rank"]}',
  });
});

test('$defs, draft-07 definitions and $ref are kept, their definitions narrowed', () => {
  const out = toAnthropicSchema({
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { to: { $ref: '#/definitions/Address', description: 'dropped beside $ref' }, from: { $ref: '#/$defs/Address' } },
    definitions: { Address: { type: 'object', properties: { zip: { type: 'string', maxLength: 5 } } } },
    $defs: { Address: { type: 'object', properties: {} } },
  });
  assert.deepEqual(out, {
    $defs: { Address: { type: 'object', properties: {}, additionalProperties: false } },
    definitions: { Address: { type: 'object', properties: { zip: { type: 'string', description: '{maxLength: 5}' } }, additionalProperties: false } },
    type: 'object',
    properties: { to: { $ref: '#/definitions/Address' }, from: { $ref: '#/$defs/Address' } },
    additionalProperties: false,
  });
});

test('what the SDK transform throws on is narrowed, not refused: no type, a type list, oneOf', () => {
  assert.deepEqual(toAnthropicSchema({ properties: { a: { type: 'string' } } }), { properties: { a: { type: 'string' } }, additionalProperties: false });
  assert.deepEqual(toAnthropicSchema({ type: 'object', properties: { a: {} } }), { type: 'object', properties: { a: {} }, additionalProperties: false });
  assert.deepEqual(
    toAnthropicSchema({ type: ['object', 'null'], properties: { a: { type: ['string', 'null'], minLength: 1, format: 'uuid' } } }),
    { type: ['object', 'null'], properties: { a: { type: ['string', 'null'], format: 'uuid', description: '{minLength: 1}' } }, additionalProperties: false },
  );
  assert.deepEqual(
    toAnthropicSchema({ oneOf: [{ type: 'string' }, { type: 'number', exclusiveMinimum: 0 }] }),
    { anyOf: [{ type: 'string' }, { type: 'number', description: '{exclusiveMinimum: 0}' }] },
  );
  assert.deepEqual(toAnthropicSchema({ type: 'string', enum: ['x', 'y'] }), { enum: ['x', 'y'] });
  assert.deepEqual(toAnthropicSchema({ type: 'object', properties: {}, additionalProperties: { type: 'string' } }), { type: 'object', properties: {}, additionalProperties: false });
});
