// Every JSON Schema in schemas/ is a valid schema (the gateway compiles them at start with
// validateSchema off, to spare every start the meta-schema check; this test does it instead).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';

test('every schema in schemas/ passes the meta-schema and compiles', () => {
  const dir = new URL('../schemas/', import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  assert.ok(files.length >= 8);
  const ajv = new Ajv({ strict: false, allErrors: true });
  const schemas = files.map((f) => JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as Record<string, unknown>);
  for (const s of schemas) if (s.$id === 'common.json') ajv.addSchema(s);
  for (const [i, s] of schemas.entries()) {
    assert.equal(ajv.validateSchema(s), true, `${files[i]}: ${ajv.errorsText(ajv.errors)}`);
    if (s.$id !== 'common.json') assert.doesNotThrow(() => ajv.compile(s), files[i]);
  }
});
