// LangChain (@langchain/openai ChatOpenAI over Chat Completions and over the Responses API,
// @langchain/anthropic ChatAnthropic), pinned, against the gateway on the simulator, configured
// only through their documented constructor settings: the base URL (`configuration.baseURL`,
// `anthropicApiUrl`), the key (ChatAnthropic sends it as Bearer through `clientOptions.authToken`),
// and the gateway's own body fields through `modelKwargs` / `invocationKwargs` — so LangChain sends
// `start_within` itself and needs no agent key. Per model: invoke, stream, a bindTools round trip,
// and withStructuredOutput.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ChatOpenAI } from '@langchain/openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { z } from 'zod';
import { simulatorSentences, startClientGateway, type ClientGateway } from '../../helpers/clients.ts';
import { sim } from '../../helpers/gateway.ts';

let gw: ClientGateway;
const models: Record<string, BaseChatModel> = {};

before(async () => {
  gw = await startClientGateway();
  const { key } = await gw.newOrg({ balance: 100_000_000 });   // a plain key: LangChain sends start_within itself
  const openaiFields = { model: 'gpt-5.4', apiKey: key, configuration: { baseURL: `${gw.url}/v1` }, maxRetries: 0, modelKwargs: { start_within: '00h-00m-30s' } };
  models['ChatOpenAI (Chat Completions)'] = new ChatOpenAI(openaiFields);
  models['ChatOpenAI (Responses)'] = new ChatOpenAI({ ...openaiFields, useResponsesApi: true });
  models.ChatAnthropic = new ChatAnthropic({
    model: 'claude-sonnet-4-6', apiKey: key, clientOptions: { authToken: key }, anthropicApiUrl: gw.url, maxRetries: 0,
    invocationKwargs: { start_within: 'now' },
  });
});
after(() => gw.close());

const textOf = (m: BaseMessage): string => (typeof m.content === 'string' ? m.content : m.content.map((c: any) => c.text ?? '').join(''));
const refusedNothing = () => assert.deepEqual(gw.refused(), []);

const getWeather = tool(async ({ city }) => `sunny in ${city}`, {
  name: 'get_weather', description: 'Weather for a city', schema: z.object({ city: z.string() }),
});

for (const name of ['ChatOpenAI (Chat Completions)', 'ChatOpenAI (Responses)', 'ChatAnthropic']) {
  test(`LangChain ${name}: invoke`, async () => {
    const m = await models[name]!.invoke(`Say hello ${sim({ output_tokens: 12 })}`);
    assert.equal(simulatorSentences(textOf(m), 12).length, 1, textOf(m));
    refusedNothing();
  });

  test(`LangChain ${name}: stream`, async () => {
    let streamed = '';
    for await (const chunk of await models[name]!.stream(`Say hello ${sim({ output_tokens: 12 })}`)) streamed += textOf(chunk);
    assert.equal(simulatorSentences(streamed, 12).length, 1, streamed);
    refusedNothing();
  });

  test(`LangChain ${name}: bindTools round trip`, async () => {
    const withTools = models[name]!.bindTools!([getWeather]);
    const history: BaseMessage[] = [new HumanMessage(`Weather in Paris? ${sim({ tool_call: 'get_weather', tool_args: { city: 'Paris' }, output_tokens: 12 })}`)];
    const first = await withTools.invoke(history);
    const call = (first as any).tool_calls?.[0];
    assert.equal(call?.name, 'get_weather', JSON.stringify(first));
    assert.deepEqual(call.args, { city: 'Paris' });
    const result = await getWeather.invoke(call.args);
    history.push(first, new ToolMessage({ content: String(result), tool_call_id: call.id }));
    const second = await withTools.invoke(history);
    assert.equal((second as any).tool_calls?.length ?? 0, 0);
    assert.equal(simulatorSentences(textOf(second), 12).length, 1, textOf(second));
    refusedNothing();
  });

  test(`LangChain ${name}: withStructuredOutput`, async () => {
    const City = z.object({ name: z.string().min(2), population: z.number().int().min(1), kind: z.enum(['capital', 'town']) });
    const out = await models[name]!.withStructuredOutput(City).invoke(`Describe a city ${sim({ output_tokens: 30 })}`);
    assert.ok(City.safeParse(out).success, JSON.stringify(out));
    refusedNothing();
  });
}
