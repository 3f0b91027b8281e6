// Structured output straight from the simulator: each wire's JSON field gets JSON (valid against
// the schema when one is given), and a JSON mode without a schema still answers JSON.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { start } from './helpers.ts';
import type { Simulator } from '../../lib/simulator/server.ts';

let sim: Simulator;
before(async () => { sim = await start(); });
after(() => sim.close());

const SCHEMA = { type: 'object', additionalProperties: false, required: ['ok', 'items'], properties: { ok: { type: 'boolean' }, items: { type: 'array', items: { type: 'integer', minimum: 3 }, minItems: 2 } } };
const valid = new Ajv({ strict: false }).compile(SCHEMA);
const post = (path: string, headers: Record<string, string>, body: unknown) =>
  fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>);

test('Chat json_schema → schema-valid JSON; json_object → JSON', async () => {
  const a = await post('/v1/chat/completions', { authorization: 'Bearer k' }, { model: 'm', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 'n', schema: SCHEMA } } });
  assert.ok(valid(JSON.parse(a.choices[0].message.content)), a.choices[0].message.content);
  const b = await post('/v1/chat/completions', { authorization: 'Bearer k' }, { model: 'm', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_object' } });
  assert.equal(typeof JSON.parse(b.choices[0].message.content), 'object');
});

test('Messages output_config.format and the earlier output_format → schema-valid JSON', async () => {
  for (const field of [{ output_config: { format: { type: 'json_schema', schema: SCHEMA } } }, { output_format: { type: 'json_schema', schema: SCHEMA } }]) {
    const r = await post('/v1/messages', { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' }, { model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'x' }], ...field });
    assert.ok(valid(JSON.parse(r.content[0].text)), r.content[0].text);
    assert.equal(r.stop_reason, 'end_turn');
  }
});

test('a tool call still wins over the output format when the directive asks for it', async () => {
  const r = await post('/v1/responses', { authorization: 'Bearer k' }, {
    model: 'm', input: 'x #sim{"tool_call":"f"}', tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
    text: { format: { type: 'json_schema', name: 'n', schema: SCHEMA } },
  });
  assert.equal(r.output.at(-1).type, 'function_call');
});
