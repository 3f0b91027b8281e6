// Tool names and call ids across providers, end to end through the official SDKs against the real
// gateway and its simulator (which refuses what the providers refuse: Anthropic's id and name
// patterns and untyped input schemas, Gemini's response count). Parallel calls to one function on
// cloud_a get their own results whatever order the caller sends them in; call ids Anthropic
// refuses are rewritten on both sides; a tool name a route of the chain refuses is the caller's
// 400 before anything is sent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordUpstreamBodies, type UpstreamBodies } from '../helpers/upstream-bodies.ts';

let t: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
let genai: any;
let recorded: UpstreamBodies;

before(async () => {
  t = await startTestGateway();
  const key = (await t.newOrg({ balance: 1_000_000_000 })).key;
  openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  genai = new GoogleGenAI({ apiKey: 'unused', apiVersion: 'v1', httpOptions: { baseUrl: t.url, headers: { authorization: `Bearer ${key}` } } });
  recorded = recordUpstreamBodies(t, ['vendor_a', 'vendor_b', 'vendor_c', 'cloud_a', 'cloud_b']);
});
after(() => t.close());

const CLAUDE = 'claude-haiku-4-5';
const PARAMS = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const WEATHER = { type: 'function' as const, function: { name: 'get_weather', parameters: PARAMS } };

test('cloud_a: results of parallel calls to one function sent in another order reach Gemini in the calls\' order, with the calls\' ids', async () => {
  const res = await openai.chat.completions.create({
    model: 'gemini-2.5-flash', start_within: 'now', provider: ['cloud_a'], tools: [WEATHER],
    messages: [
      { role: 'user', content: 'Weather in Paris and London?' },
      { role: 'assistant', content: null, tool_calls: [
        { id: 'call_P', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_L', type: 'function', function: { name: 'get_weather', arguments: '{"city":"London"}' } },
      ] },
      { role: 'tool', tool_call_id: 'call_L', content: 'London: rain' },
      { role: 'tool', tool_call_id: 'call_P', content: 'Paris: sun' },
    ],
  } as any);
  assert.ok(res.choices[0]!.message.content);
  const [, model, answers] = recorded.last('cloud_a').contents;
  assert.deepEqual(model.parts.map((p: any) => [p.functionCall.id, p.functionCall.args.city]), [['call_P', 'Paris'], ['call_L', 'London']]);
  // Gemini pairs same-named responses by position: Paris's call must get Paris's result.
  assert.deepEqual(answers.parts.map((p: any) => [p.functionResponse.id, p.functionResponse.response.result]),
    [['call_P', 'Paris: sun'], ['call_L', 'London: rain']]);
});

for (const id of ['functions.get_weather:0', 'call.abc', 'call 1', '']) {
  test(`Chat caller's history call id ${JSON.stringify(id)} on Claude routes: rewritten to Anthropic's pattern, call and result alike`, async () => {
    for (const route of ['vendor_c', 'cloud_b']) {
      const res = await openai.chat.completions.create({
        model: CLAUDE, start_within: 'now', provider: [route], tools: [WEATHER],
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: id, content: 'sunny' },
        ],
      } as any);
      assert.ok(res.choices[0]!.message.content, route);
      const [, call, result] = recorded.last(route as 'vendor_c').messages;
      assert.match(call.content[0].id, /^[a-zA-Z0-9_-]+$/, route);
      assert.equal(result.content[0].tool_use_id, call.content[0].id, route);
    }
  });
}

test('two ids that differ only in characters Anthropic refuses stay two ids; an id that fits goes as it is', async () => {
  const call = (callId: string, city: string) => ({ type: 'function_call', call_id: callId, name: 'get_weather', arguments: JSON.stringify({ city }) });
  const out = (callId: string, output: string) => ({ type: 'function_call_output', call_id: callId, output });
  await openai.responses.create({
    model: CLAUDE, start_within: 'now', provider: ['vendor_c'], tools: [{ type: 'function', name: 'get_weather', parameters: PARAMS, strict: false }],
    input: [{ role: 'user', content: 'Paris, London, Rome?' }, call('a.b', 'Paris'), call('a:b', 'London'), call('toolu_01', 'Rome'),
      out('a.b', 'sun'), out('a:b', 'rain'), out('toolu_01', 'warm')],
  } as any);
  const [, calls, results] = recorded.last('vendor_c').messages;
  const ids = calls.content.map((b: any) => b.id);
  assert.equal(new Set(ids).size, 3);
  assert.equal(ids[2], 'toolu_01');
  assert.deepEqual(results.content.map((b: any) => b.tool_use_id), ids);
});

test('an empty or untyped parameters schema reaches Claude with type "object" at its root', async () => {
  for (const parameters of [{}, { properties: { a: { type: 'string' } } }]) {
    const res = await openai.chat.completions.create({
      model: CLAUDE, start_within: 'now', provider: ['vendor_c'], messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'ping', parameters } }],
    } as any);
    assert.ok(res.choices[0]!.message.content);
    assert.deepEqual(recorded.last('vendor_c').tools[0].input_schema, { type: 'object', ...parameters });
  }
});

/** Runs `f`, which must be refused 400 unsupported_parameter naming tools[i].name, before any route adapter built a body. */
async function refusedUnsent(f: () => Promise<unknown>, status: (err: any) => [code: string, param: string | undefined]): Promise<string> {
  const before = recorded.sent.length;
  let message = '';
  await assert.rejects(f(), (err: any) => {
    assert.equal(err.status, 400, String(err));
    const [code, param] = status(err);
    assert.equal(code, 'unsupported_parameter');
    if (param !== undefined) assert.equal(param, 'tools[0].name');
    message = err.message;
    return true;
  });
  assert.equal(recorded.sent.length, before, 'nothing was sent upstream');
  return message;
}

test('a tool name a route of the chain refuses: 400 unsupported_parameter tools[i].name with the rule, nothing sent', async () => {
  const openaiErr = (err: any): [string, string] => [err.code, err.param];
  for (const name of ['server.tool', 'server:tool']) {
    const message = await refusedUnsent(
      () => genai.interactions.create({
        model: CLAUDE, start_within: 'now', provider: ['vendor_c', 'cloud_b'], input: 'hi',
        tools: [{ type: 'function', name, parameters: PARAMS }],
      }, { maxRetries: 0 }),
      (err) => [err.error.error.code, undefined],
    );
    assert.match(message, /tools\[0\]\.name .*letters, digits, _ and -, at most 128 characters/);
  }
  const long = await refusedUnsent(
    () => anthropic.messages.create({
      model: 'gpt-5.4-mini', start_within: 'now', provider: ['vendor_a'], max_tokens: 100, messages: [{ role: 'user', content: 'hi' }],
      tools: [{ name: 'x'.repeat(70), input_schema: { type: 'object' } }],
    } as any),
    (err) => [err.error.error.code, undefined],
  );
  assert.match(long, /at most 64 characters/);
  await refusedUnsent(() => openai.chat.completions.create({
    model: 'gemini-2.5-flash', start_within: 'now', provider: ['cloud_a'], messages: [{ role: 'user', content: 'hi' }],
    tools: [{ type: 'function', function: { name: '1tool', parameters: PARAMS } }],
  } as any), openaiErr);
  // A name every route of the chain takes is served (Gemini takes dots and colons).
  const ok: any = await genai.interactions.create({
    model: 'gemini-2.5-flash', start_within: 'now', provider: ['vendor_b', 'cloud_a'], input: 'hi',
    tools: [{ type: 'function', name: 'server.tool', parameters: PARAMS }],
  }, { maxRetries: 0 });
  assert.equal(ok.status, 'completed');
});
