// Interactions callers end to end, through the official @google/genai SDK against the real gateway
// and its simulator: what the gateway refuses before anything is sent (delivery later, hosted tools
// and generation_config keys a route of the chain cannot carry), what reaches each route (cloud_a's
// Vertex fields, whose reasoning signature goes where, the legacy JSON schema), and the ids of
// answers no provider stored. The simulator does not verify signatures nor ground answers, so the
// tests read the body each route adapter built.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { GoogleGenAI } from '@google/genai';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { recordUpstreamBodies, type UpstreamBodies } from '../helpers/upstream-bodies.ts';
import type { RouteName } from '../../lib/routes.ts';
import { ANTHROPIC_SIGNATURE_TAG } from '../../lib/formats/reasoning-tags.ts';
import { UNSTORED_INTERACTION_PREFIX } from '../../lib/formats/interactions/ids.ts';

let t: TestGateway;
let genai: any;
let openai: OpenAI;
/** The bodies the route adapters built. */
let recorded: UpstreamBodies;

before(async () => {
  t = await startTestGateway();
  const key = (await t.newOrg({ balance: 1_000_000_000 })).key;
  genai = new GoogleGenAI({ apiKey: 'unused', apiVersion: 'v1', httpOptions: { baseUrl: t.url, headers: { authorization: `Bearer ${key}` } } });
  openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  recorded = recordUpstreamBodies(t, ['vendor_a', 'vendor_b', 'vendor_c', 'cloud_a', 'cloud_b']);
});
after(() => t.close());

const last = (route: RouteName): any => recorded.last(route);
const GEMINI = 'gemini-3.5-flash';
const CLAUDE = 'claude-haiku-4-5';
const GPT = 'gpt-5.4-mini';
const i = (body: any) => genai.interactions.create({ start_within: 'now', ...body }, { maxRetries: 0 });

/** The SDK raises the gateway's 400 with the spec's code (Google's envelope), the message naming `param`. */
async function refused(p: Promise<unknown>, code: string, param: string): Promise<void> {
  await assert.rejects(p, (err: any) => {
    assert.equal(err.status, 400, String(err));
    assert.equal(err.error.error.code, code);
    assert.ok(err.error.error.message.includes(param), err.error.error.message);
    return true;
  });
}

/** Runs `f` and asserts no route adapter built a body meanwhile: refused before anything was sent. */
async function nothingSent(f: () => Promise<void>): Promise<void> {
  const before = recorded.sent.length;
  await f();
  assert.equal(recorded.sent.length, before, `sent upstream: ${JSON.stringify(recorded.sent.slice(before))}`);
}

// ---------- 1. Delivery later ----------

test('background: true and webhook_config are refused before anything is sent, in both formats; background: false is served', async () => {
  await nothingSent(async () => {
    await refused(i({ model: GEMINI, input: 'write an essay', background: true }), 'unsupported_parameter', 'background');
    await refused(i({ model: GEMINI, input: 'write an essay', webhook_config: { uris: ['https://example.com/hook'] } }), 'unsupported_parameter', 'webhook_config');
    await refused(i({ model: CLAUDE, input: 'write an essay', background: true }), 'unsupported_parameter', 'background');
    await assert.rejects(openai.responses.create({ model: GPT, input: 'write an essay', background: true, start_within: 'now' } as any),
      (err: any) => err.status === 400 && err.code === 'unsupported_parameter' && err.param === 'background');
  });
  assert.equal((await i({ model: GEMINI, input: 'hi', background: false })).status, 'completed');
  const r: any = await openai.responses.create({ model: GPT, input: 'hi', background: false, start_within: 'now' } as any);
  assert.equal(r.status, 'completed');
});

// ---------- 2. Hosted tools and generation_config keys ----------

const FUNCTION = { type: 'function', name: 'f', parameters: { type: 'object', properties: { a: { type: 'integer' } } } };

test('hosted tools and generation_config.seed reach cloud_a in Vertex\'s own fields', async () => {
  const r = await i({
    model: GEMINI, provider: ['cloud_a'], input: 'latest news?',
    tools: [FUNCTION, { type: 'google_search' }, { type: 'code_execution' }, { type: 'url_context' }], generation_config: { seed: 7 },
  });
  assert.equal(r.status, 'completed');
  const body = last('cloud_a');
  assert.deepEqual(body.tools.slice(1), [{ googleSearch: {} }, { codeExecution: {} }, { urlContext: {} }]);
  assert.equal(body.tools[0].functionDeclarations[0].name, 'f');
  assert.equal(body.generationConfig.seed, 7);
});

test('on fallback from vendor_b, cloud_a gets the hosted tool and the seed vendor_b got as sent', async () => {
  const before = recorded.sent.length;
  const r = await i({
    model: GEMINI, provider: ['vendor_b', 'cloud_a'], input: `news? ${sim({ fail: [503], id: 'fidelity-fallback' })}`,
    tools: [FUNCTION, { type: 'google_search' }], generation_config: { seed: 7 },
  });
  assert.equal(r.status, 'completed');
  const [b, a] = recorded.sent.slice(before);
  assert.equal(b!.route, 'vendor_b');
  assert.deepEqual(b!.body.tools[1], { type: 'google_search' });
  assert.equal(b!.body.generation_config.seed, 7);
  assert.equal(a!.route, 'cloud_a');
  assert.deepEqual(a!.body.tools[1], { googleSearch: {} });
  assert.equal(a!.body.generationConfig.seed, 7);
});

test('a hosted tool or generation_config key a route of the chain cannot carry is refused before anything is sent', async () => {
  await nothingSent(async () => {
    await refused(i({ model: GPT, input: 'news?', tools: [{ type: 'google_search' }] }), 'unsupported_parameter', 'google_search');
    await refused(i({ model: CLAUDE, input: 'run it', tools: [FUNCTION, { type: 'code_execution' }] }), 'unsupported_parameter', 'code_execution');
    await refused(i({ model: GEMINI, provider: ['vendor_b', 'cloud_a'], input: 'find it', tools: [{ type: 'file_search', file_search_store_names: ['s'] }] }),
      'unsupported_parameter', 'cloud_a');
    await refused(i({ model: GEMINI, provider: ['cloud_a'], input: 'x', tools: [{ type: 'google_search', search_types: ['enterprise_web_search'] }] }),
      'unsupported_parameter', 'cloud_a');
    await refused(i({ model: GEMINI, provider: ['cloud_a'], input: 'x', generation_config: { speech_config: { voice: 'Kore' } } }),
      'unsupported_parameter', 'generation_config.speech_config');
    await refused(i({ model: GPT, input: 'x', generation_config: { seed: 7 } }), 'unsupported_generation_config', 'generation_config.seed');
  });
  // vendor B's own API takes them as sent
  await i({ model: GEMINI, input: 'find it', tools: [{ type: 'file_search', file_search_store_names: ['s'] }], generation_config: { speech_config: { voice: 'Kore' } } });
  assert.deepEqual(last('vendor_b').tools, [{ type: 'file_search', file_search_store_names: ['s'] }]);
});

// ---------- 3. Whose reasoning signature is whose ----------

const ASK = [{ type: 'user_input', content: [{ type: 'text', text: `Hi ${sim({ output_tokens: 5, reasoning_tokens: 12 })}` }] }];
const THEN = [{ type: 'user_input', content: [{ type: 'text', text: 'and now?' }] }];
const THINK = { generation_config: { thinking_level: 'low' } };

test('Claude\'s signature comes back tagged and returns to Claude only, as Claude signed it', async () => {
  const r1 = await i({ model: CLAUDE, input: ASK, ...THINK });
  const thought = r1.steps.find((s: any) => s.type === 'thought');
  assert.ok(thought.signature.startsWith(ANTHROPIC_SIGNATURE_TAG), thought.signature);
  const claudeSig = thought.signature.slice(ANTHROPIC_SIGNATURE_TAG.length);
  await i({ model: CLAUDE, input: [...ASK, ...r1.steps, ...THEN] });
  assert.deepEqual(last('vendor_c').messages[1].content[0], { type: 'thinking', thinking: thought.summary[0].text, signature: claudeSig });
  await i({ model: GEMINI, provider: ['cloud_a'], input: [...ASK, ...r1.steps, ...THEN] });
  assert.ok(!JSON.stringify(last('cloud_a')).includes(claudeSig), 'Claude\'s signature is no thoughtSignature');
});

test('Gemini\'s thought signature never reaches Anthropic (it would verify and refuse it)', async () => {
  const r1 = await i({ model: GEMINI, input: ASK, ...THINK });
  const thought = r1.steps.find((s: any) => s.type === 'thought');
  assert.ok(thought.signature && !thought.signature.startsWith(ANTHROPIC_SIGNATURE_TAG), `Gemini's own, untagged: ${thought.signature}`);
  await i({ model: CLAUDE, input: [...ASK, ...r1.steps, ...THEN] });
  const assistant = last('vendor_c').messages[1].content;
  assert.ok(!assistant.some((b: any) => b.type === 'thinking' || b.type === 'redacted_thinking'), JSON.stringify(assistant));
  assert.ok(!JSON.stringify(last('vendor_c')).includes(thought.signature), 'nowhere in the body Anthropic gets');
});

test('a streamed thought, rebuilt from its deltas, goes back to Claude with its text as Claude wrote it', async () => {
  const stream = await i({ model: CLAUDE, input: ASK, ...THINK, stream: true });
  const steps = new Map<number, any>();
  for await (const ev of stream) {
    if (ev.event_type === 'step.start') steps.set(ev.index, { ...ev.step });
    if (ev.event_type !== 'step.delta') continue;
    const step = steps.get(ev.index);
    if (ev.delta.type === 'thought_summary') (step.summary ??= []).push(ev.delta.content);
    if (ev.delta.type === 'thought_signature') step.signature = ev.delta.signature;
    if (ev.delta.type === 'text') (step.content ??= []).push({ type: 'text', text: ev.delta.text });
  }
  const thought = [...steps.values()].find((s) => s.type === 'thought');
  assert.ok(thought.summary.length > 1, 'one summary item per delta');
  assert.ok(thought.signature.startsWith(ANTHROPIC_SIGNATURE_TAG), `tagged: ${thought.signature}`);
  const whole = (await i({ model: CLAUDE, input: ASK, ...THINK })).steps.find((s: any) => s.type === 'thought').summary[0].text;
  await i({ model: CLAUDE, input: [...ASK, ...steps.values(), ...THEN] });
  assert.equal(last('vendor_c').messages[1].content[0].thinking, whole);
});

// ---------- 4. Ids of answers no provider stored ----------

test('an answer no provider stored carries a gateway id, streamed or not; naming it later is a clear 400', async () => {
  const fallback = await i({ model: GEMINI, provider: ['vendor_b', 'cloud_a'], input: `hi ${sim({ fail: [503], id: 'fidelity-ids' })}` });
  const viaCloud = await i({ model: GEMINI, provider: ['cloud_a'], input: 'hi' });
  const translated = await i({ model: CLAUDE, input: 'hi' });
  const stream = await i({ model: CLAUDE, input: 'hi', stream: true });
  const streamIds = new Set<string>();
  for await (const ev of stream) {
    if (ev.event_type === 'interaction.created' || ev.event_type === 'interaction.completed') streamIds.add(ev.interaction.id);
  }
  assert.equal(streamIds.size, 1, 'created and completed name one interaction');
  for (const id of [fallback.id, viaCloud.id, translated.id, ...streamIds]) {
    assert.ok(id.startsWith(UNSTORED_INTERACTION_PREFIX), id);
    await nothingSent(() => refused(i({ model: GEMINI, input: 'more', previous_interaction_id: id }), 'conversation_state_unroutable', 'not stored'));
  }
  // vendor B's own id still pins the next turn there
  const own = await i({ model: GEMINI, input: 'hi' });
  assert.ok(own.id.startsWith('v1_'), own.id);
  assert.equal((await i({ model: GEMINI, input: 'more', previous_interaction_id: own.id })).status, 'completed');
});

// ---------- 5. The legacy JSON schema ----------

test('legacy response_format (a bare schema with response_mime_type application/json) reaches every route as the schema', async () => {
  const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false };
  const legacy = { input: 'make a person', response_format: schema, response_mime_type: 'application/json' };
  const a = await i({ model: GPT, ...legacy });
  assert.equal(typeof JSON.parse(a.output_text).name, 'string', 'the answer follows the schema');
  assert.deepEqual(last('vendor_a').text.format.schema, schema);
  await i({ model: GEMINI, provider: ['cloud_a'], ...legacy });
  assert.deepEqual(last('cloud_a').generationConfig.responseJsonSchema, schema);
  await i({ model: CLAUDE, ...legacy });
  assert.deepEqual(last('vendor_c').output_config.format, { type: 'json_schema', schema });
});
