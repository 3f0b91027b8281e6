// What an Interactions caller's request keeps on its way through the IR, and what the caller is
// handed back: whose reasoning signature is whose (Claude's tagged, Gemini's the format's own),
// streamed summaries joined as they came, the legacy JSON schema response_format, the hosted tools
// and generation_config keys cloud_a's Vertex wire carries, and the ids of answers no provider
// stored. End to end through the gateway: test/e2e/interactions-fidelity.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { interactionsCodec } from '../../lib/formats/interactions/index.ts';
import { messagesCodec } from '../../lib/formats/messages/index.ts';
import { vertexCodec } from '../../lib/formats/vertex/index.ts';
import { CARRIED_EXTRAS, interactionsEndpoint } from '../../lib/formats/interactions/endpoint.ts';
import { isUnstoredInteractionId, UNSTORED_INTERACTION_PREFIX } from '../../lib/formats/interactions/ids.ts';
import { INTERACTIONS_GENERATION, INTERACTIONS_TOOLS, SEARCH_TYPES } from '../../lib/formats/vertex/request-encode.ts';
import { ANTHROPIC_SIGNATURE_TAG } from '../../lib/formats/reasoning-tags.ts';
import type { CallerRequest, EncodeContext } from '../../lib/formats/types.ts';
import { GatewayError } from '../../lib/errors.ts';
import { type IREvent, zeroUsage } from '../../lib/ir.ts';
import { parseFrame } from '../../lib/sse.ts';

const CTX: EncodeContext = { id: '', model: 'claude-x', createdAt: 1_760_000_000, tier: 'standard' };
const CLAUDE_SIG = 'EqQBCkYIBRgCIkBclaude';
const GEMINI_SIG = 'CiQBDDnWxgemini';

/** The events of a Claude answer: thinking in two deltas, its signature, then text. */
const CLAUDE_EVENTS: IREvent[] = [
  { type: 'start', id: 'msg_01upstream', model: 'claude-x' },
  { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
  { type: 'reasoning_delta', index: 0, text: 'Line one.\n' },
  { type: 'reasoning_delta', index: 0, text: 'Line two.' },
  { type: 'signature', index: 0, signature: CLAUDE_SIG, anthropic: true },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { kind: 'text' } },
  { type: 'text_delta', index: 1, text: 'Hi.' },
  { type: 'block_stop', index: 1 },
  { type: 'finish', reason: 'end', usage: zeroUsage() },
];

/** The payloads of an encoder's SSE text ([DONE] as {}). */
const frames = (sse: string): any[] => sse.split('\n\n').filter(Boolean).map((f) => parseFrame(f)!.data).map((d) => (d === '[DONE]' ? {} : JSON.parse(d)));

test('Claude\'s signature reaches an Interactions caller tagged, streamed (one delta at step.stop) and not', () => {
  const encoder = interactionsCodec.createStreamEncoder(CTX);
  const events = frames(CLAUDE_EVENTS.map((ev) => encoder.push(ev)).join(''));
  const sigs = events.filter((e) => e.delta?.type === 'thought_signature');
  assert.deepEqual(sigs.map((e) => e.delta.signature), [ANTHROPIC_SIGNATURE_TAG + CLAUDE_SIG]);
  const stop = events.findIndex((e) => e.event_type === 'step.stop' && e.index === 0);
  assert.equal(events.indexOf(sigs[0]), stop - 1, 'the last delta before the thought step stops, as Gemini sends it');
  const body = interactionsCodec.encodeResponse({
    id: 'msg_01', model: 'claude-x', blocks: [
      { kind: 'reasoning', text: 'Think.', signature: CLAUDE_SIG, anthropic: true },
      { kind: 'reasoning', text: '', signature: 'redacted-data', anthropic: true },
      { kind: 'reasoning', text: '', signature: GEMINI_SIG },
    ], stopReason: 'end', usage: zeroUsage(), tier: 'standard',
  }, CTX);
  assert.deepEqual(body.steps.map((s: any) => s.signature), [ANTHROPIC_SIGNATURE_TAG + CLAUDE_SIG, `${ANTHROPIC_SIGNATURE_TAG}redacted-data`, GEMINI_SIG]);
});

test('a tagged thought goes back to Claude only; an untagged (Gemini) one to the Google wires only', () => {
  const ir = interactionsCodec.decodeRequest({
    model: 'm', input: [
      { type: 'user_input', content: [{ type: 'text', text: 'Hi' }] },
      { type: 'thought', signature: ANTHROPIC_SIGNATURE_TAG + CLAUDE_SIG, summary: [{ type: 'text', text: 'Think.' }] },
      { type: 'thought', signature: `${ANTHROPIC_SIGNATURE_TAG}redacted-data` },
      { type: 'thought', signature: GEMINI_SIG, summary: [{ type: 'text', text: 'Gemini thought.' }] },
      { type: 'model_output', content: [{ type: 'text', text: 'Hello.' }] },
      { type: 'user_input', content: [{ type: 'text', text: 'More?' }] },
    ],
  });
  assert.deepEqual(ir.messages[1]!.content.slice(0, 3), [
    { type: 'reasoning', text: 'Think.', signature: CLAUDE_SIG, anthropic: true },
    { type: 'reasoning', signature: 'redacted-data', anthropic: true },
    { type: 'reasoning', text: 'Gemini thought.', signature: GEMINI_SIG },
  ]);
  const claude = messagesCodec.encodeRequest(ir);
  assert.deepEqual(claude.messages[1].content, [
    { type: 'thinking', thinking: 'Think.', signature: CLAUDE_SIG },
    { type: 'redacted_thinking', data: 'redacted-data' },
    { type: 'text', text: 'Hello.' },
  ]);
  const vertex = JSON.stringify(vertexCodec.encodeRequest(ir));
  const interactions = JSON.stringify(interactionsCodec.encodeRequest(ir));
  for (const google of [vertex, interactions]) {
    assert.ok(google.includes(GEMINI_SIG), google);
    assert.ok(!google.includes(CLAUDE_SIG) && !google.includes('redacted-data'), google);
  }
});

test('Gemini\'s thought signature, with or without a summary, never reaches Anthropic', () => {
  const ir = interactionsCodec.decodeRequest({
    model: 'm', input: [
      { type: 'user_input', content: [{ type: 'text', text: 'Hi' }] },
      { type: 'thought', signature: GEMINI_SIG },
      { type: 'thought', signature: 'CiQBsecond', summary: [{ type: 'text', text: 'Gemini thought.' }] },
      { type: 'model_output', content: [{ type: 'text', text: 'Hello.' }] },
    ],
  });
  assert.deepEqual(messagesCodec.encodeRequest(ir).messages[1].content, [{ type: 'text', text: 'Hello.' }]);
});

test('a streamed summary, one item per delta, joins as it came (Claude signs the exact text)', () => {
  const ir = interactionsCodec.decodeRequest({
    model: 'm', input: [
      { type: 'user_input', content: 'Hi' },
      { type: 'thought', signature: ANTHROPIC_SIGNATURE_TAG + CLAUDE_SIG, summary: [{ type: 'text', text: 'Line one.\n' }, { type: 'text', text: 'Line two.' }] },
    ],
  });
  assert.equal((ir.messages[1]!.content[0] as { text?: string }).text, 'Line one.\nLine two.');
  assert.deepEqual(messagesCodec.encodeRequest(ir).messages[1].content[0], { type: 'thinking', thinking: 'Line one.\nLine two.', signature: CLAUDE_SIG });
});

test('legacy response_format: a bare JSON schema beside response_mime_type "application/json" is the schema', () => {
  const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
  const ir = interactionsCodec.decodeRequest({ model: 'm', input: 'x', response_format: schema, response_mime_type: 'application/json' });
  assert.deepEqual(ir.responseFormat, { type: 'json_schema', schema });
  assert.equal(ir.native, undefined);
  // the current form and the JSON mode without a schema are unchanged
  assert.deepEqual(interactionsCodec.decodeRequest({ model: 'm', input: 'x', response_format: { type: 'text', mime_type: 'application/json', schema } }).responseFormat,
    { type: 'json_schema', schema });
  assert.deepEqual(interactionsCodec.decodeRequest({ model: 'm', input: 'x', response_mime_type: 'application/json' }).responseFormat, { type: 'json_object' });
  assert.equal(interactionsCodec.decodeRequest({ model: 'm', input: 'x', response_format: schema }).responseFormat, undefined, 'no JSON mime type: not the legacy form');
});

test('cloud_a carries exactly the hosted tools and generation_config keys the Interactions endpoint lets through to it', () => {
  const carried = CARRIED_EXTRAS.cloud_a;
  assert.ok(carried && carried !== 'all', 'cloud_a carries some, not all');
  assert.deepEqual(Object.keys(carried.tools).sort(), Object.keys(INTERACTIONS_TOOLS).sort());
  assert.deepEqual([...carried.generation].sort(), Object.keys(INTERACTIONS_GENERATION).sort());
  assert.deepEqual([...carried.tools.google_search!.search_types!].sort(), Object.keys(SEARCH_TYPES).sort());
  const ir = interactionsCodec.decodeRequest({
    model: 'm', input: 'x',
    tools: [
      { type: 'function', name: 'f', parameters: { type: 'object' } },
      { type: 'google_search', search_types: ['web_search', 'image_search'] }, { type: 'code_execution' }, { type: 'url_context' },
    ],
    generation_config: { seed: 7, thinking_level: 'low', thinking_summaries: 'none' },
  });
  const body = vertexCodec.encodeRequest(ir);
  assert.deepEqual(body.tools, [
    { functionDeclarations: [{ name: 'f', parametersJsonSchema: { type: 'object' } }] },
    { googleSearch: { searchTypes: { webSearch: {}, imageSearch: {} } } }, { codeExecution: {} }, { urlContext: {} },
  ]);
  assert.equal(body.generationConfig.seed, 7);
  assert.deepEqual(body.generationConfig.thinkingConfig, { thinkingLevel: 'LOW', includeThoughts: false });
});

test('an answer no provider stored gets a gateway id, streamed or not; the wire\'s own id is not taken', () => {
  assert.ok(!isUnstoredInteractionId('v1_ChdTbXNI'), 'a Gemini id is no gateway id');
  const body = interactionsCodec.encodeResponse({ id: 'msg_01', model: 'c', blocks: [], stopReason: 'end', usage: zeroUsage(), tier: 'standard' }, CTX);
  assert.ok(body.id.startsWith(UNSTORED_INTERACTION_PREFIX), body.id);
  const encoder = interactionsCodec.createStreamEncoder(CTX);
  const events = frames(CLAUDE_EVENTS.map((ev) => encoder.push(ev)).join(''));
  const created = events.find((e) => e.event_type === 'interaction.created').interaction.id;
  assert.ok(isUnstoredInteractionId(created), created);
  assert.equal(events.find((e) => e.event_type === 'interaction.completed').interaction.id, created);
  // the provider's id of an Interactions answer assembled from its own stream is kept
  assert.equal(interactionsCodec.encodeResponse({ id: 'v1_x', model: 'g', blocks: [], stopReason: 'end', usage: zeroUsage(), tier: 'standard' }, { ...CTX, id: 'v1_x' }).id, 'v1_x');
});

test('a hosted tool or tool key named after an Object.prototype member is unknown on cloud_a: 400 naming it, never carried', () => {
  const check = (tool: Record<string, unknown>): unknown => {
    const request = {
      model: { id: 'gemini-x', family: 'vendor_b', routes: ['vendor_b', 'cloud_a'] }, routes: ['cloud_a'],
      startWithin: { kind: 'now' }, body: { model: 'gemini-x', input: 'hi', tools: [tool] }, ownWire: false, includeUsage: false, betas: [],
    } as unknown as CallerRequest;
    try { interactionsEndpoint.check(request, {}); } catch (err) { return err; }
    return undefined;
  };
  const refusedAt = (tool: Record<string, unknown>, param: string): void => {
    const err = check(tool) as GatewayError | undefined;
    assert.ok(err instanceof GatewayError, `${JSON.stringify(tool)}: refused (got ${String(err)})`);
    assert.deepEqual([err.status, err.code, err.param], [400, 'unsupported_parameter', param], JSON.stringify(tool));
  };
  refusedAt({ type: 'bogus' }, 'tools[0]');
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
    refusedAt(JSON.parse(`{"type":${JSON.stringify(name)}}`), 'tools[0]');
    refusedAt(JSON.parse(`{"type":"google_search",${JSON.stringify(name)}:["web_search"]}`), `tools[0].${name}`);
  }
  refusedAt({ type: ['google_search'] }, 'tools[0]');
  assert.equal(check({ type: 'google_search', search_types: ['web_search'] }), undefined, 'the known tool is carried');
  // Vertex's encoder has no tool for such a type either, should one ever reach it.
  for (const type of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const body = vertexCodec.encodeRequest({
      model: 'm', stream: false, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      native: { family: 'interactions', fields: { tools: [JSON.parse(`{"type":${JSON.stringify(type)}}`)] } },
    });
    assert.equal(body.tools, undefined, type);
  }
});
