// vendor_b, Gemini Interactions: the @google/genai Interactions surface plus raw fetch for framing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { GoogleGenAI } from '@google/genai';
import type { Simulator } from '../../lib/simulator/server.ts';
import { assertSatisfies, directive, parseSSE, start } from './helpers.ts';

const BOOK = {
  type: 'object',
  properties: {
    title: { type: 'string' },
    year: { type: 'integer', minimum: 1900, maximum: 2030 },
    genres: { type: 'array', items: { type: 'string', enum: ['scifi', 'poetry'] }, minItems: 1, maxItems: 3 },
  },
  required: ['title', 'year', 'genres'],
};

let sim: Simulator;
let ai: GoogleGenAI;
before(async () => {
  sim = await start();
  ai = new GoogleGenAI({ apiKey: 'g-key', httpOptions: { baseUrl: sim.url } });
});
after(() => sim.close());

async function post(body: object, headers: Record<string, string> = { 'x-goog-api-key': 'g-key' }) {
  return fetch(`${sim.url}/v1beta/interactions`, { method: 'POST', headers, body: JSON.stringify(body) });
}

test('stream framing: event names equal event_type, steps, completed usage + tier, then done/[DONE]', async () => {
  const res = await post({ model: 'gemini-sim', input: 'Tell me', stream: true, service_tier: 'flex' });
  assert.equal(res.status, 200);
  const frames = parseSSE(await res.text());
  const last = frames.at(-1)!;
  assert.deepEqual(last, { event: 'done', data: '[DONE]' });
  const events = frames.slice(0, -1).map((f) => ({ name: f.event, json: JSON.parse(f.data) as Record<string, any> }));
  for (const e of events) assert.equal(e.name, e.json.event_type);
  assert.deepEqual(events.map((e) => e.name).filter((n) => n !== 'step.delta'),
    ['interaction.created', 'interaction.status_update', 'step.start', 'step.stop', 'interaction.completed']);
  const done = events.at(-1)!.json.interaction;
  assert.equal(done.status, 'completed');
  assert.equal(done.service_tier, 'flex');
  assert.equal(done.steps, undefined);
  assert.equal(done.usage.total_output_tokens, 16);
  assert.equal(done.usage.total_input_tokens, Math.ceil('Tell me'.length / 4));
  assert.equal(done.usage.total_tokens, done.usage.total_input_tokens + 16);
  assert.equal(done.usage.total_thought_tokens, 0);
});

// Interactions is generally available on /v1 (the path @google/genai 3 calls by default); /v1beta
// stays (the gateway's own upstream path, @google/genai 2's default). Each SDK pinned to one.
test('SDK on either API version: /v1beta/interactions and /v1/interactions are both served', async () => {
  for (const apiVersion of ['v1beta', 'v1']) {
    const pinned = new GoogleGenAI({ apiKey: 'g-key', httpOptions: { baseUrl: sim.url, apiVersion } });
    const r = await pinned.interactions.create({ model: 'gemini-sim', input: 'hello' });
    assert.equal(r.status, 'completed', apiVersion);
    assert.deepEqual(r.steps.map((s) => s.type), ['model_output'], apiVersion);
  }
});

test('SDK non-stream: thought step (summary + signature) and model_output; thought tokens outside output', async () => {
  const r = await ai.interactions.create({ model: 'gemini-sim', input: 'hello', generation_config: { thinking_level: 'low' } });
  assert.equal(r.status, 'completed');
  assert.equal(r.service_tier, 'standard');
  assert.deepEqual(r.steps.map((s) => s.type), ['thought', 'model_output']);
  assert.equal(r.usage!.total_thought_tokens, 8);
  assert.equal(r.usage!.total_output_tokens, 16);
  assert.equal(r.usage!.total_tokens, r.usage!.total_input_tokens! + 16 + 8);
});

test('SDK stream: thought_summary and thought_signature deltas before text', async () => {
  const stream = await ai.interactions.create({
    model: 'gemini-sim', input: [{ type: 'text', text: 'hi' }], stream: true, generation_config: { thinking_level: 'high' },
  });
  const deltaTypes: string[] = [];
  for await (const ev of stream) if (ev.event_type === 'step.delta') deltaTypes.push(ev.delta.type);
  assert.deepEqual([...new Set(deltaTypes)], ['thought_summary', 'thought_signature', 'text']);
  assert.equal(deltaTypes.filter((t) => t === 'thought_summary').length, 32);
});

test('forced tool: function_call step, arguments_delta fragments, requires_action; result turn → text', async () => {
  const tools = [{ type: 'function', name: 'find_book', parameters: BOOK }];
  const res = await post({ model: 'gemini-sim', input: 'a book', tools, stream: true, generation_config: { tool_choice: 'any' } });
  const events = parseSSE(await res.text()).slice(0, -1).map((f) => JSON.parse(f.data) as Record<string, any>);
  const startEv = events.find((e) => e.event_type === 'step.start')!;
  assert.equal(startEv.step.type, 'function_call');
  assert.equal(startEv.step.name, 'find_book');
  assert.deepEqual(startEv.step.arguments, {});
  const fragments = events.filter((e) => e.event_type === 'step.delta').map((e) => e.delta.arguments as string);
  assert.ok(fragments.length >= 2);
  assertSatisfies(BOOK, JSON.parse(fragments.join('')));
  assert.equal(events.at(-1)!.interaction.status, 'requires_action');

  const body = await (await post({
    model: 'gemini-sim', tools, generation_config: { tool_choice: { allowed_tools: { mode: 'any', tools: ['find_book'] } } },
    input: `book ${directive({ id: 'x' })}`,
  })).json() as Record<string, any>;
  assert.equal(body.status, 'requires_action');
  assert.equal(body.steps[0].type, 'function_call');
  assertSatisfies(BOOK, body.steps[0].arguments);

  const answered = await (await post({
    model: 'gemini-sim', tools, generation_config: { tool_choice: 'any' },
    input: [
      { type: 'user_input', content: [{ type: 'text', text: 'a book' }] },
      { type: 'function_call', id: body.steps[0].id, name: 'find_book', arguments: body.steps[0].arguments },
      { type: 'function_result', call_id: body.steps[0].id, name: 'find_book', result: 'Dune' },
    ],
  })).json() as Record<string, any>;
  assert.equal(answered.status, 'completed');
  assert.equal(answered.steps[0].type, 'model_output');
});

test('truncation → incomplete; missing key → 401 UNAUTHENTICATED; flex refusal → 503 UNAVAILABLE', async () => {
  const cut = await (await post({ model: 'gemini-sim', input: 'x', generation_config: { max_output_tokens: 3 } })).json() as Record<string, any>;
  assert.equal(cut.status, 'incomplete');
  assert.equal(cut.usage.total_output_tokens, 3);

  const noKey = await post({ model: 'gemini-sim', input: 'x' }, {});
  assert.equal(noKey.status, 401);
  const err = await noKey.json() as { error: { code: number; status: string } };
  assert.equal(err.error.code, 401);
  assert.equal(err.error.status, 'UNAUTHENTICATED');

  const refused = await post({ model: 'gemini-sim', service_tier: 'flex', input: `x ${directive({ flex_refuse: true })}` });
  assert.equal(refused.status, 503);
  const body = await refused.json() as { error: { code: number; status: string; message: string } };
  assert.equal(body.error.status, 'UNAVAILABLE');
  assert.match(body.error.message, /at capacity/);
  // The same directive on the standard tier is served.
  assert.equal((await post({ model: 'gemini-sim', input: `x ${directive({ flex_refuse: true })}` })).status, 200);
});
