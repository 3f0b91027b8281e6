// A Chat or Responses caller never sees Gemini's thought signatures (its format has no field for
// them), so the tool call it sends back is unsigned; Gemini 3 (the simulator enforces it on
// cloud_a for gemini-3* models) refuses that with 400. The gateway signs such a replayed call with
// Google's documented skip value, so the second turn of a tool conversation succeeds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
let openai: OpenAI;

before(async () => {
  t = await startTestGateway();
  const org = await t.newOrg({ balance: 100_000_000 });
  openai = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
});
after(() => t.close());

const MODEL = 'gemini-3.1-pro-preview';
const ROUTE = { start_within: 'now', provider: ['cloud_a'] };
const TOOL = { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const ASK = `Weather in Paris? ${sim({ tool_call: 'get_weather' })}`;

test('Chat caller, two-turn tool conversation on a gemini-3 model over cloud_a: the second turn succeeds', async () => {
  const tools = [{ type: 'function' as const, function: TOOL }];
  const first: any = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: ASK }], tools, ...ROUTE } as any);
  const call = first.choices[0].message.tool_calls?.[0];
  assert.equal(call?.function.name, 'get_weather');
  const { data: second, response } = await openai.chat.completions.create({
    model: MODEL, tools, ...ROUTE, stream: true,
    messages: [
      { role: 'user', content: ASK },
      { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: call.function }] },
      { role: 'tool', tool_call_id: call.id, content: 'sunny' },
    ],
  } as any).withResponse();
  let text = '';
  for await (const chunk of second as any) text += chunk.choices[0]?.delta?.content ?? '';
  assert.equal(response.headers.get('x-service-served-provider'), 'cloud_a');
  assert.ok(text.length > 0, 'the model answers after the tool result');
});

test('Responses caller, two-turn tool conversation on a gemini-3 model over cloud_a: the second turn succeeds', async () => {
  const tools = [{ type: 'function' as const, ...TOOL, strict: false }];
  const first: any = await openai.responses.create({ model: MODEL, input: ASK, tools, ...ROUTE } as any);
  const call = first.output.find((o: any) => o.type === 'function_call');
  assert.equal(call?.name, 'get_weather');
  const second: any = await openai.responses.create({
    model: MODEL, tools, ...ROUTE,
    input: [
      { role: 'user', content: ASK },
      { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
    ],
  } as any);
  assert.equal(second.status, 'completed');
  assert.ok(second.output_text.length > 0, 'the model answers after the tool result');
});
