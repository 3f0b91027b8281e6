// The AI SDK (`ai` 7, pinned) with each of its three providers that speak a gateway format —
// @ai-sdk/openai (Responses, and .chat for Chat Completions), @ai-sdk/anthropic (Messages) and
// @ai-sdk/google's interactions() (Interactions) — against the gateway on the simulator, each
// configured only through its documented provider settings (baseURL, apiKey/authToken, headers).
// The SDK has no deadline field: the keys are agent keys (a 30 s race for the families that can
// flex, "now" for vendor C). Per provider: generateText, streamText, a tool round trip through
// the SDK's own tool loop, and generateObject with a zod schema.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, streamText, generateObject, tool, stepCountIs, type LanguageModel } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { z } from 'zod';
import { simulatorSentences, startClientGateway, type ClientGateway } from '../../helpers/clients.ts';
import { sim } from '../../helpers/gateway.ts';

let gw: ClientGateway;
const models: Record<string, LanguageModel> = {};

before(async () => {
  gw = await startClientGateway();
  const race = (await gw.newOrg({ balance: 100_000_000, defaultStartWithin: '00h-00m-30s' })).key;
  const now = (await gw.newOrg({ balance: 100_000_000, defaultStartWithin: 'now' })).key;
  const openai = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: race });
  const anthropic = createAnthropic({ baseURL: `${gw.url}/v1`, authToken: now });
  // Gemini's key header is not read by the gateway (Bearer only): the documented `headers` setting carries it.
  const google = createGoogleGenerativeAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', headers: { authorization: `Bearer ${race}` } });
  models['openai (Responses)'] = openai('gpt-5.4');
  models['openai.chat (Chat Completions)'] = openai.chat('gpt-5.4');
  models['anthropic (Messages)'] = anthropic('claude-sonnet-4-6');
  models['google.interactions (Interactions)'] = google.interactions('gemini-3.5-flash');
});
after(() => gw.close());

const PROVIDERS = ['openai (Responses)', 'openai.chat (Chat Completions)', 'anthropic (Messages)', 'google.interactions (Interactions)'];
const refusedNothing = () => assert.deepEqual(gw.refused(), []);

for (const name of PROVIDERS) {
  test(`AI SDK ${name}: generateText`, async () => {
    const r = await generateText({ model: models[name]!, prompt: `Say hello ${sim({ output_tokens: 12 })}`, maxRetries: 0 });
    assert.equal(simulatorSentences(r.text, 12).length, 1, r.text);
    assert.ok((r.usage.outputTokens ?? 0) >= 12, JSON.stringify(r.usage));
    refusedNothing();
  });

  test(`AI SDK ${name}: streamText`, async () => {
    const r = streamText({ model: models[name]!, prompt: `Say hello ${sim({ output_tokens: 12 })}`, maxRetries: 0, onError: () => {} });
    let streamed = '';
    for await (const delta of r.textStream) streamed += delta;
    assert.equal(simulatorSentences(streamed, 12).length, 1, streamed);
    assert.equal(await r.text, streamed);
    assert.equal(await r.finishReason, 'stop');
    refusedNothing();
  });

  test(`AI SDK ${name}: tool round trip through the SDK's tool loop`, async () => {
    const calls: unknown[] = [];
    const r = await generateText({
      model: models[name]!, maxRetries: 0, stopWhen: stepCountIs(3),
      prompt: `Weather in Paris? ${sim({ tool_call: 'get_weather', tool_args: { city: 'Paris' }, output_tokens: 12 })}`,
      tools: {
        get_weather: tool({
          description: 'Weather for a city', inputSchema: z.object({ city: z.string() }),
          execute: async (input) => { calls.push(input); return { forecast: 'sunny' }; },
        }),
      },
    });
    assert.deepEqual(calls, [{ city: 'Paris' }]);
    assert.equal(r.steps.length, 2, 'a tool step, then the answer');
    assert.equal(r.steps[0]!.finishReason, 'tool-calls');
    assert.equal(simulatorSentences(r.text, 12).length, 1, r.text);
    refusedNothing();
  });

  test(`AI SDK ${name}: generateObject returns an object valid against the zod schema`, async () => {
    const City = z.object({ name: z.string().min(2), population: z.number().int().min(1), tags: z.array(z.string()).min(1), kind: z.enum(['capital', 'town']) });
    const r = await generateObject({ model: models[name]!, schema: City, prompt: `Describe a city ${sim({ output_tokens: 30 })}`, maxRetries: 0 });
    assert.ok(City.safeParse(r.object).success, JSON.stringify(r.object));
    refusedNothing();
  });
}
