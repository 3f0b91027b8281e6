// Interactions callers end to end, through the official @google/genai SDK against the real gateway
// and its simulator: the format's top-level fields only vendor B takes (refused on any route of the
// chain that would drop them, defaults and metadata served), a thinking_level outside the
// documented ones, an image part without mime_type, and a provider's failed finish in a translated
// stream. The tests read the body each route adapter built.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { GoogleGenAI } from '@google/genai';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { recordUpstreamBodies, type UpstreamBodies } from '../helpers/upstream-bodies.ts';
import { OWN_FIXTURES } from '../helpers/recorded.ts';

let t: TestGateway;
let genai: any;
let recorded: UpstreamBodies;

before(async () => {
  t = await startTestGateway({ config: { simulator: { fixturesDir: OWN_FIXTURES } } });
  const key = (await t.newOrg({ balance: 1_000_000_000 })).key;
  genai = new GoogleGenAI({ apiKey: 'unused', apiVersion: 'v1', httpOptions: { baseUrl: t.url, headers: { authorization: `Bearer ${key}` } } });
  recorded = recordUpstreamBodies(t, ['vendor_a', 'vendor_b', 'vendor_c', 'cloud_a', 'cloud_b']);
});
after(() => t.close());

const GEMINI = 'gemini-3.5-flash';
const CLAUDE = 'claude-haiku-4-5';
const GPT = 'gpt-5.4-mini';
const i = (body: any) => genai.interactions.create({ start_within: 'now', ...body }, { maxRetries: 0 });

/** The SDK raises the gateway's 400 with `code` (Google's envelope), the message naming each of `names`. */
async function refused(p: Promise<unknown>, code: string, ...names: string[]): Promise<void> {
  await assert.rejects(p, (err: any) => {
    assert.equal(err.status, 400, String(err));
    assert.equal(err.error.error.code, code);
    for (const name of names) assert.ok(err.error.error.message.includes(name), err.error.error.message);
    return true;
  });
}

/** Runs `f` and asserts no route adapter built a body meanwhile: refused before anything was sent. */
async function nothingSent(f: () => Promise<void>): Promise<void> {
  const before = recorded.sent.length;
  await f();
  assert.equal(recorded.sent.length, before, `sent upstream: ${JSON.stringify(recorded.sent.slice(before))}`);
}

// ---------- Top-level fields only vendor B takes ----------

const ANSWER_FIELDS: Record<string, unknown> = {
  cached_content: 'cachedContents/abc123',
  safety_settings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_LOW_AND_ABOVE' }],
  response_modalities: ['IMAGE'],
  response_mime_type: 'text/x.enum',
  environment: { type: 'remote' },
  agent_config: { type: 'deep-research' },
};

test('a top-level field only vendor B takes is refused, naming it, on any route of the chain that would drop it', async () => {
  await nothingSent(async () => {
    for (const [field, value] of Object.entries(ANSWER_FIELDS)) {
      for (const model of [CLAUDE, GPT]) await refused(i({ model, input: 'hi', [field]: value }), 'unsupported_parameter', field);
      await refused(i({ model: GEMINI, provider: ['cloud_a'], input: 'hi', [field]: value }), 'unsupported_parameter', field, 'cloud_a');
      // the fallback route would serve without it: refused before vendor_b is tried
      const chain = i({ model: GEMINI, provider: ['vendor_b', 'cloud_a'], input: 'hi', [field]: value });
      await refused(chain, 'unsupported_parameter', field, 'cloud_a');
    }
  });
  // vendor B's own API takes them as sent
  await i({ model: GEMINI, provider: ['vendor_b'], input: 'hi', ...ANSWER_FIELDS });
  const body = recorded.last('vendor_b');
  for (const [field, value] of Object.entries(ANSWER_FIELDS)) assert.deepEqual(body[field], value, field);
});

test('defaults, labels and store ask nothing another route lacks: served everywhere', async () => {
  const quiet = {
    cached_content: null, safety_settings: [], response_modalities: ['TEXT'], response_mime_type: 'text/plain',
    environment: null, agent_config: {}, labels: { team: 'search' }, store: true,
  };
  for (const [model, provider] of [[CLAUDE, undefined], [GPT, undefined], [GEMINI, ['cloud_a']]] as const) {
    const r = await i({ model, input: 'hi', ...quiet, ...(provider ? { provider } : {}) });
    assert.equal(r.status, 'completed', model);
  }
});

// ---------- thinking_level ----------

test('a thinking_level outside the documented ones is refused where it would be dropped; vendor B judges it', async () => {
  const odd = { generation_config: { thinking_level: 'extreme' } };
  await nothingSent(async () => {
    await refused(i({ model: CLAUDE, input: 'hi', ...odd }), 'unsupported_value', 'generation_config.thinking_level');
    await refused(i({ model: GPT, input: 'hi', ...odd }), 'unsupported_value', 'generation_config.thinking_level');
    await refused(i({ model: GEMINI, provider: ['vendor_b', 'cloud_a'], input: 'hi', ...odd }), 'unsupported_value',
      'generation_config.thinking_level', 'cloud_a');
  });
  await i({ model: GEMINI, provider: ['vendor_b'], input: 'hi', ...odd });
  assert.equal(recorded.last('vendor_b').generation_config.thinking_level, 'extreme');
  await i({ model: CLAUDE, input: 'hi', generation_config: { thinking_level: 'low' } }); // a documented level still maps
  assert.ok(recorded.last('vendor_c').thinking, JSON.stringify(recorded.last('vendor_c')));
});

// ---------- An image without mime_type ----------

test('an image part without mime_type reaches every route typed by its bytes', async () => {
  const JPEG = '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHR8eHQ==';
  const input = [{ type: 'text', text: 'describe' }, { type: 'image', data: JPEG }];
  await i({ model: GPT, input });
  assert.equal(recorded.last('vendor_a').input[0].content[1].image_url, `data:image/jpeg;base64,${JPEG}`);
  await i({ model: CLAUDE, input });
  assert.deepEqual(recorded.last('vendor_c').messages[0].content[1].source, { type: 'base64', media_type: 'image/jpeg', data: JPEG });
  await i({ model: GEMINI, provider: ['cloud_a'], input });
  assert.deepEqual(recorded.last('cloud_a').contents[0].parts[1].inlineData, { mimeType: 'image/jpeg', data: JPEG });
});

// ---------- A failed finish in a translated stream ----------

test('a provider\'s failed finish ends a translated stream with the format\'s error event, not a completed interaction', async () => {
  const stream = await i({
    model: GEMINI, provider: ['cloud_a'], stream: true, input: `x ${sim({ replay: 'gemini-vertex/malformed-call.chunks.txt' })}`,
  });
  const events: any[] = [];
  for await (const ev of stream) events.push(ev);
  assert.ok(!events.some((ev) => ev.event_type === 'interaction.completed'), JSON.stringify(events.at(-1)));
  assert.deepEqual(events.at(-1), {
    event_type: 'error', error: { code: 'provider_error', message: 'The provider ended the response with an error.' },
  });
});

// ---------- Media in a function result ----------

const PNG_DATA = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex').toString('base64');
/** A tool turn whose result holds text and an image (FunctionResultSubcontent), then the question. */
const toolTurn = (model: string, provider: string[], extra: any[] = []) => i({
  model, provider,
  input: [
    { type: 'user_input', content: [{ type: 'text', text: 'Take a screenshot.' }] },
    { type: 'function_call', id: 'call_1', name: 'screenshot', arguments: {} },
    { type: 'function_result', call_id: 'call_1', name: 'screenshot', result: [{ type: 'text', text: 'here it is' }, { type: 'image', data: PNG_DATA, mime_type: 'image/png' }, ...extra] },
  ],
  tools: [{ type: 'function', name: 'screenshot', description: 'Takes a screenshot.', parameters: { type: 'object', properties: {} } }],
});

test('an image in a function_result reaches every route after the result, as Messages and Responses tool images do (it was dropped off vendor B)', async () => {
  for (const [model, route] of [[GPT, 'vendor_a'], [CLAUDE, 'vendor_c'], [CLAUDE, 'cloud_b'], [GEMINI, 'cloud_a'], [GEMINI, 'vendor_b']] as const) {
    await toolTurn(model, [route]);
    const body = JSON.stringify(recorded.last(route));
    assert.ok(body.includes(PNG_DATA), `${route}: the image's bytes went upstream: ${body.slice(0, 600)}`);
  }
  // Where it lands, on a Responses wire: the result, then the image in the same user turn.
  const input = recorded.last('vendor_a').input as any[];
  const at = input.findIndex((item) => item.type === 'function_call_output');
  assert.equal(input[at].output, 'here it is');
  assert.deepEqual(input.slice(at + 1).flatMap((item) => item.content ?? []).map((c: any) => [c.type, c.image_url?.slice(0, 22)]),
    [['input_image', 'data:image/png;base64,']]);
});

test('audio or video toward vendor A is refused by name (OpenAI takes neither as a file), nothing sent', async () => {
  await nothingSent(() => refused(toolTurn(GPT, ['vendor_a'], [{ type: 'audio', data: PNG_DATA, mime_type: 'audio/wav' }]), 'unsupported_parameter', 'audio/wav'));
  await nothingSent(() => refused(i({ model: GPT, provider: ['vendor_a'], input: [{ type: 'video', uri: 'https://example.com/v.mp4', mime_type: 'video/mp4' }, { type: 'text', text: 'what happens' }] }), 'unsupported_parameter', 'video/mp4'));
});
