// Every caller format × every route × streamed/non-streamed through the official SDKs (openai for
// Responses and Chat, @anthropic-ai/sdk for Messages, @google/genai for Interactions), real
// sockets, the simulator behind: a text turn, a tool-call round trip, a reasoning turn, an error.
// The SDKs' own parsing must accept every response and stream.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { Ajv } from 'ajv';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
let genai: GoogleGenAI;
/** The headers of the last response the genai client received (its interactions calls expose none):
 *  recorded by the fetch the SDK is given through its documented httpOptions.fetch. */
let genaiHeaders: Headers | undefined;
const recordingFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  genaiHeaders = res.headers;
  return res;
};

before(async () => {
  t = await startTestGateway();
  const org = await t.newOrg({ balance: 100_000_000 });
  openai = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: org.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  genai = new GoogleGenAI({ apiKey: 'unused', apiVersion: 'v1', httpOptions: { baseUrl: t.url, headers: { authorization: `Bearer ${org.key}` }, retryOptions: { attempts: 1 }, fetch: recordingFetch } as any });
});
after(() => t.close());

const ROUTES: Array<{ route: string; model: string }> = [
  { route: 'vendor_a', model: 'gpt-5.4-mini' },
  { route: 'vendor_b', model: 'gemini-3.5-flash' },
  { route: 'cloud_a', model: 'gemini-3.5-flash' },
  { route: 'vendor_c', model: 'claude-haiku-4-5' },
  { route: 'cloud_b', model: 'claude-haiku-4-5' },
];

const TOOL = { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

/** One answer as the caller's SDK read it; `headers` are the gateway's response headers. */
interface Turn { text: string; reasoning: boolean; tool?: { id: string; name: string; args: any }; raw: any; headers: Headers }

/** One caller format: how its SDK sends a turn and reads the answer, and how it replies to a tool call. */
interface Caller {
  name: 'responses' | 'chat' | 'messages' | 'interactions';
  turn(a: { model: string; route: string; stream: boolean; text: string; reasoning?: boolean; tools?: boolean; history?: any; schema?: Record<string, unknown> }): Promise<Turn>;
  /** The follow-up turn's history after a tool call answered 'sunny'. */
  toolReply(first: Turn, userText: string): any;
  errorCode(err: any): string | undefined;
}

const common = (route: string) => ({ start_within: 'now', provider: [route] });

const responsesCaller: Caller = {
  name: 'responses',
  async turn({ model, route, stream, text, reasoning, tools, history, schema }) {
    const body: any = { model, input: history ?? text, ...common(route), ...(reasoning ? { reasoning: { effort: 'low' } } : {}), ...(tools ? { tools: [{ type: 'function', ...TOOL }] } : {}), ...(schema ? { text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } } } : {}) };
    if (!stream) {
      const { data, response } = await openai.responses.create(body).withResponse();
      return fromResponse(data, response.headers);
    }
    const { data: s, response } = await (openai.responses.create({ ...body, stream: true }) as any).withResponse();
    let done: any;
    let streamed = '';
    for await (const ev of s) { if (ev.type === 'response.completed') done = ev.response; if (ev.type === 'response.output_text.delta') streamed += ev.delta; }
    const turn = fromResponse(done, response.headers);
    assert.equal(turn.text, streamed, 'the completed response matches the streamed deltas');
    return turn;
  },
  toolReply(first, userText) {
    const call = first.raw.output.find((o: any) => o.type === 'function_call');
    return [{ role: 'user', content: userText }, ...first.raw.output.filter((o: any) => o.type !== 'message'), { type: 'function_call_output', call_id: call.call_id, output: 'sunny' }];
  },
  errorCode: (err) => err.code,
};
function fromResponse(r: any, headers: Headers): Turn {
  const call = r.output.find((o: any) => o.type === 'function_call');
  const text = r.output.filter((o: any) => o.type === 'message').flatMap((m: any) => m.content).map((c: any) => c.text ?? '').join('');
  return { text, reasoning: r.output.some((o: any) => o.type === 'reasoning') || (r.usage?.output_tokens_details?.reasoning_tokens ?? 0) > 0, tool: call && { id: call.call_id, name: call.name, args: JSON.parse(call.arguments) }, raw: r, headers };
}

const chatCaller: Caller = {
  name: 'chat',
  async turn({ model, route, stream, text, reasoning, tools, history, schema }) {
    const body: any = { model, messages: history ?? [{ role: 'user', content: text }], ...common(route), ...(reasoning ? { reasoning_effort: 'low' } : {}), ...(tools ? { tools: [{ type: 'function', function: TOOL }] } : {}), ...(schema ? { response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } } } : {}) };
    if (!stream) {
      const { data, response } = await openai.chat.completions.create(body).withResponse();
      const m: any = data.choices[0]!.message;
      const tc = m.tool_calls?.[0];
      return { text: m.content ?? '', reasoning: (data.usage?.completion_tokens_details?.reasoning_tokens ?? 0) > 0, tool: tc && { id: tc.id, name: tc.function.name, args: JSON.parse(tc.function.arguments) }, raw: data, headers: response.headers };
    }
    const { data: s, response } = await (openai.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }) as any).withResponse();
    let out = '';
    let usage: any;
    const calls: any[] = [];
    for await (const c of s) {
      const d = c.choices[0]?.delta;
      if (d?.content) out += d.content;
      for (const tc of d?.tool_calls ?? []) {
        calls[tc.index] ??= { id: tc.id, name: tc.function?.name, args: '' };
        calls[tc.index].args += tc.function?.arguments ?? '';
      }
      if (c.usage) usage = c.usage;
    }
    const tc = calls[0];
    return { text: out, reasoning: (usage?.completion_tokens_details?.reasoning_tokens ?? 0) > 0, tool: tc && { id: tc.id, name: tc.name, args: JSON.parse(tc.args) }, raw: { calls }, headers: response.headers };
  },
  toolReply(first, userText) {
    const tc = first.tool!;
    return [{ role: 'user', content: userText }, { role: 'assistant', content: null, tool_calls: [{ id: tc.id, type: 'function', function: { name: tc.name, arguments: JSON.stringify(tc.args) } }] }, { role: 'tool', tool_call_id: tc.id, content: 'sunny' }];
  },
  errorCode: (err) => err.code,
};

const messagesCaller: Caller = {
  name: 'messages',
  async turn({ model, route, stream, text, reasoning, tools, history, schema }) {
    const body: any = { model, max_tokens: 2048, messages: history ?? [{ role: 'user', content: text }], ...common(route), ...(reasoning ? { thinking: { type: 'enabled', budget_tokens: 1024 } } : {}), ...(tools ? { tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.parameters }] } : {}), ...(schema ? { output_config: { format: { type: 'json_schema', schema } } } : {}) };
    let msg: any;
    let headers: Headers;
    if (stream) {
      const s = anthropic.messages.stream(body);
      headers = (await s.withResponse()).response.headers as Headers;
      msg = await s.finalMessage();
    } else {
      const { data, response } = await anthropic.messages.create(body).withResponse();
      msg = data;
      headers = response.headers as Headers;
    }
    assert.ok(['standard', 'flex'].includes(msg.usage.service_tier), `usage.service_tier is flex or standard, got ${msg.usage.service_tier}`);
    assert.ok(['end_turn', 'max_tokens', 'tool_use', 'refusal'].includes(msg.stop_reason));
    const tu = msg.content.find((b: any) => b.type === 'tool_use');
    const thinking = msg.content.find((b: any) => b.type === 'thinking');
    if (tu) assert.equal(msg.stop_reason, 'tool_use');
    return { text: msg.content.filter((b: any) => b.type === 'text').map((b: any) => b.text).join(''), reasoning: !!thinking, tool: tu && { id: tu.id, name: tu.name, args: tu.input }, raw: msg, headers };
  },
  toolReply(first, userText) {
    return [{ role: 'user', content: userText }, { role: 'assistant', content: first.raw.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: first.tool!.id, content: 'sunny' }] }];
  },
  errorCode: (err) => err.error?.error?.code,
};

const interactionsCaller: Caller = {
  name: 'interactions',
  async turn({ model, route, stream, text, reasoning, tools, history, schema }) {
    const body: any = { model, input: history ?? text, ...common(route), ...(reasoning ? { generation_config: { thinking_level: 'low' } } : {}), ...(tools ? { tools: [{ type: 'function', ...TOOL }] } : {}), ...(schema ? { response_format: { type: 'text', mime_type: 'application/json', schema } } : {}) };
    const ai: any = genai;
    genaiHeaders = undefined;
    if (!stream) {
      const r = await ai.interactions.create(body, { maxRetries: 0 });
      const call = r.steps.find((s: any) => s.type === 'function_call');
      assert.equal(r.status, call ? 'requires_action' : 'completed');
      const txt = r.steps.filter((s: any) => s.type === 'model_output').flatMap((s: any) => s.content).map((c: any) => c.text ?? '').join('');
      return { text: txt, reasoning: r.steps.some((s: any) => s.type === 'thought'), tool: call && { id: call.id, name: call.name, args: call.arguments }, raw: r, headers: genaiHeaders! };
    }
    const s = await ai.interactions.create({ ...body, stream: true }, { maxRetries: 0 });
    let txt = '';
    let status = '';
    let thought = false;
    const steps: any[] = [];
    for await (const ev of s) {
      if (ev.event_type === 'step.start') { steps[ev.index] = { ...ev.step, args: '' }; if (ev.step.type === 'thought') thought = true; }
      if (ev.event_type === 'step.delta' && ev.delta.type === 'text') txt += ev.delta.text;
      if (ev.event_type === 'step.delta' && ev.delta.type === 'arguments_delta') steps[ev.index].args += ev.delta.arguments;
      if (ev.event_type === 'interaction.completed') status = ev.interaction.status;
    }
    const call = steps.find((x) => x?.type === 'function_call');
    assert.equal(status, call ? 'requires_action' : 'completed');
    return { text: txt, reasoning: thought, tool: call && { id: call.id, name: call.name, args: JSON.parse(call.args || '{}') }, raw: { steps }, headers: genaiHeaders! };
  },
  toolReply(first, userText) {
    const tc = first.tool!;
    return [
      { type: 'user_input', content: [{ type: 'text', text: userText }] },
      { type: 'function_call', id: tc.id, name: tc.name, arguments: tc.args },
      { type: 'function_result', call_id: tc.id, name: tc.name, result: 'sunny' },
    ];
  },
  errorCode: (err) => err.error?.error?.code ?? err.error?.code,
};

const CITY = {
  type: 'object', additionalProperties: false, required: ['name', 'population', 'tags', 'kind'],
  properties: {
    name: { type: 'string', minLength: 2 }, population: { type: 'integer', minimum: 1 },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1 }, kind: { type: 'string', enum: ['capital', 'town'] },
  },
};
const validCity = new Ajv({ strict: false }).compile(CITY);

const CALLERS = [responsesCaller, chatCaller, messagesCaller, interactionsCaller];

for (const caller of CALLERS) {
  for (const { route, model } of ROUTES) {
    for (const stream of [false, true]) {
      const name = `${caller.name} → ${route} (${stream ? 'streamed' : 'non-streamed'})`;

      test(`${name}: text`, async () => {
        const turn = await caller.turn({ model, route, stream, text: `Hello ${sim({ output_tokens: 6 })}` });
        assert.ok(turn.text.split(' ').filter(Boolean).length >= 6, `text: ${JSON.stringify(turn.text)}`);
        assert.equal(turn.headers.get('x-service-served-provider'), route);
      });

      test(`${name}: tool-call round trip`, async () => {
        const userText = `Weather in Paris? ${sim({ tool_call: 'get_weather' })}`;
        const first = await caller.turn({ model, route, stream, text: userText, tools: true });
        assert.ok(first.tool, 'the model called the tool');
        assert.equal(first.tool!.name, 'get_weather');
        assert.equal(typeof first.tool!.args.city, 'string');
        const second = await caller.turn({ model, route, stream, text: '', tools: true, history: caller.toolReply(first, userText) });
        assert.equal(second.tool, undefined, 'after the result the model answers');
        assert.equal(first.headers.get('x-service-served-provider'), route);
        assert.equal(second.headers.get('x-service-served-provider'), route);
        assert.ok(second.text.length > 0);
      });

      test(`${name}: structured output is JSON valid against the schema`, async () => {
        const turn = await caller.turn({ model, route, stream, text: `Describe a city ${sim({ output_tokens: 40 })}`, schema: CITY });
        assert.ok(validCity(JSON.parse(turn.text)), `${turn.text}: ${JSON.stringify(validCity.errors)}`);
      });

      test(`${name}: reasoning`, async () => {
        const turn = await caller.turn({ model, route, stream, text: `Think ${sim({ output_tokens: 4 })}`, reasoning: true });
        assert.ok(turn.reasoning, 'the answer carries reasoning where the format can show it');
        assert.equal(turn.headers.get('x-service-served-provider'), route);
        assert.ok(turn.text.length > 0);
      });

      test(`${name}: upstream failure → the format's typed error with the spec's code`, async () => {
        await assert.rejects(caller.turn({ model, route, stream, text: sim({ fail: [500], id: `matrix-${name}` }) }), (err: any) => {
          assert.equal(err.status, 502, `status ${err.status}: ${err.message}`);
          assert.equal(caller.errorCode(err), 'provider_error');
          return true;
        });
      });
    }
  }
}
