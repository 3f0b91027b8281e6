// Structured outputs and tool schemas through the official SDKs' helpers, checked where the
// simulator does not hold a provider to its own rules: what each route's body carries. Claude routes
// get Anthropic's schema subset (the real API refuses `minimum`, `$schema`, open objects, … with a
// 400), cloud_a gets the caller's JSON Schema in `parametersJsonSchema` (Vertex's `parameters`
// refuses `$defs`, `$ref`, type lists, `const`), and @anthropic-ai/sdk's beta.messages.parse, which
// adds its own structured-outputs beta, is served on every route.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { zodFunction, zodResponseFormat } from 'openai/helpers/zod';
import { betaZodOutputFormat, betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { z } from 'zod';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { recordUpstreamBodies, type UpstreamBodies } from '../helpers/upstream-bodies.ts';

let t: TestGateway;
let rec: UpstreamBodies;
let openai: OpenAI;
let anthropic: Anthropic;
let key: string;

before(async () => {
  t = await startTestGateway();
  rec = recordUpstreamBodies(t, ['vendor_a', 'vendor_b', 'vendor_c', 'cloud_a', 'cloud_b']);
  const org = await t.newOrg({ balance: 100_000_000 });
  key = org.key;
  openai = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: org.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
});
after(() => t.close());

const Person = z.object({ name: z.string(), age: z.number().int(), tags: z.array(z.string()) });
/** Bounds the grammar cannot enforce: they reach the model as description text only. */
const Order = z.object({ sku: z.string().min(3).max(12), lines: z.array(z.string()).min(2), contact: z.string().email() });
/** Keywords Anthropic's structured outputs refuse, as JSON members. */
const OUTSIDE_SUBSET = /"(\$schema|minimum|maximum|minLength|pattern)"|"minItems":[2-9]/;

/** Every object of a schema, nested ones included. */
function objects(schema: any): any[] {
  if (!schema || typeof schema !== 'object') return [];
  const own = schema.type === 'object' ? [schema] : [];
  return [...own, ...Object.values(schema).flatMap((v) => (Array.isArray(v) ? v.flatMap(objects) : objects(v)))];
}

for (const route of ['vendor_c', 'cloud_b'] as const) {
  test(`chat.completions.parse with a zod int → ${route}: the format schema sent is in Anthropic's subset`, async () => {
    const r: any = await openai.chat.completions.parse({
      model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'a person' }], response_format: zodResponseFormat(Person, 'person'),
      start_within: 'now', provider: [route],
    } as any);
    assert.equal(typeof r.choices[0]!.message.parsed?.age, 'number');
    const schema = rec.last(route).output_config.format.schema;
    assert.doesNotMatch(JSON.stringify(schema), OUTSIDE_SUBSET);
    assert.deepEqual(schema.properties.age, { type: 'integer', description: '{minimum: -9007199254740991, maximum: 9007199254740991}' });
  });

  test(`a Responses format with lengths, minItems 2 and a pattern → ${route}: moved to descriptions, every object closed`, async () => {
    const format = { type: 'json_schema', name: 'order', strict: true, schema: zodResponseFormat(Order, 'order').json_schema.schema };
    await openai.responses.create({ model: 'claude-haiku-4-5', input: 'an order', text: { format }, start_within: 'now', provider: [route] } as any);
    const schema = rec.last(route).output_config.format.schema;
    assert.doesNotMatch(JSON.stringify(schema), OUTSIDE_SUBSET);
    assert.equal(schema.properties.contact.format, 'email');
    assert.match(schema.properties.lines.description, /minItems: 2/);
    for (const object of objects(schema)) assert.equal(object.additionalProperties, false);
  });

  test(`a strict tool (zodFunction) → ${route}: its input_schema is narrowed, a plain tool's is sent as written`, async () => {
    const plain = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } } };
    await openai.chat.completions.create({
      model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }],
      tools: [
        zodFunction({ name: 'lookup', parameters: z.object({ id: z.number().int(), code: z.string().regex(/^[A-Z]+$/) }) }),
        { type: 'function', function: { name: 'count', parameters: plain } },
      ],
      start_within: 'now', provider: [route],
    } as any);
    const [strict, loose] = rec.last(route).tools;
    assert.equal(strict.strict, true);
    assert.doesNotMatch(JSON.stringify(strict.input_schema), OUTSIDE_SUBSET);
    assert.equal(strict.input_schema.additionalProperties, false);
    assert.deepEqual(loose.input_schema, plain);
  });
}

test('a tool schema with $defs, $ref, a type list and const → cloud_a: sent as parametersJsonSchema, as written', async () => {
  const params = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $defs: { Address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    type: 'object',
    properties: { to: { $ref: '#/$defs/Address' }, note: { type: ['string', 'null'] }, kind: { const: 'letter' } },
    required: ['to'],
  };
  const r: any = await openai.chat.completions.create({
    model: 'gemini-3.5-flash', messages: [{ role: 'user', content: `send it ${sim({ tool_call: 'send' })}` }],
    tools: [{ type: 'function', function: { name: 'send', parameters: params } }], start_within: 'now', provider: ['cloud_a'],
  } as any);
  assert.equal(r.choices[0]!.message.tool_calls?.[0]?.function.name, 'send');
  const { $schema: _dialect, ...sent } = params;
  assert.deepEqual(rec.last('cloud_a').tools[0].functionDeclarations[0], { name: 'send', parametersJsonSchema: sent });
});

for (const [route, model] of [['vendor_a', 'gpt-5.4-mini'], ['cloud_a', 'gemini-3.5-flash'], ['vendor_c', 'claude-haiku-4-5'], ['cloud_b', 'claude-haiku-4-5']] as const) {
  test(`beta.messages.parse (beta structured-outputs-2025-12-15) → ${route}: served and parsed`, async () => {
    const r: any = await anthropic.beta.messages.parse({
      model, max_tokens: 1024, messages: [{ role: 'user', content: 'a person' }], output_format: betaZodOutputFormat(Person),
      start_within: 'now', provider: [route],
    } as any);
    assert.equal(typeof r.parsed_output?.name, 'string');
    // Bedrock refuses a beta flag it does not know; structured outputs need none there.
    if (route === 'cloud_b') assert.equal(rec.last(route).anthropic_beta, undefined);
  });
}

for (const [route, model] of [['vendor_a', 'gpt-5.4-mini'], ['cloud_a', 'gemini-3.5-flash'], ['vendor_c', 'claude-haiku-4-5'], ['cloud_b', 'claude-haiku-4-5']] as const) {
  test(`beta.messages.toolRunner with the default client → ${route}: thread refused as the SDK expects, the run goes on without it`, async () => {
    const sent: any[] = [];
    const client = new Anthropic({
      authToken: key, apiKey: null, baseURL: t.url, maxRetries: 0,
      fetch: (async (url: any, init: any) => { sent.push(JSON.parse(String(init.body))); return fetch(url, init); }) as typeof fetch,
    });
    const weather = betaZodTool({ name: 'get_weather', description: 'weather', inputSchema: z.object({ city: z.string() }), run: async (i) => `sunny in ${i.city}` });
    const runner = client.beta.messages.toolRunner({
      model, max_tokens: 1024, messages: [{ role: 'user', content: `weather ${sim({ tool_call: 'get_weather' })}` }], tools: [weather], max_iterations: 3,
      start_within: 'now', provider: [route],
    } as any);
    const stops: string[] = [];
    for await (const message of runner) stops.push(message.stop_reason!);
    assert.deepEqual(stops, ['tool_use', 'end_turn']);
    assert.deepEqual(sent.map((body) => body.thread), [{ type: 'create' }, undefined, undefined]);
    assert.equal(sent.at(-1).messages.length, 3, 'the last turn carries the whole history');
  });
}

test('a Messages thread field: 400 in the Messages envelope, error.details naming thread_unsupported_request', async () => {
  const res = await fetch(`${t.url}/v1/messages`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-beta': 'message-threads-2026-08-12' },
    body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], thread: { type: 'create' }, start_within: 'now' }),
  });
  assert.equal(res.status, 400);
  const body = await res.json();
  assert.deepEqual(body.error.details, { error_code: 'thread_unsupported_request' });
  assert.equal(body.error.code, 'unsupported_parameter');
  assert.equal(body.error.type, 'invalid_request_error');
});
