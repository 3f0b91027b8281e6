// A non-streamed answer the gateway builds (from a provider's JSON body, or assembled from its
// stream) says what the same answer streamed says. A provider answer that ended in a failed finish
// (Vertex MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL) is a 502 provider_error in every caller
// format, as its stream ends in an error event, never a 200 turn. And a Messages caller on cloud_b
// (Bedrock, called streamed) gets the Message the Anthropic SDK accumulates from the stream:
// stop_sequence, pause_turn, citations, redacted_thinking and server tool blocks kept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { OWN_FIXTURES } from '../helpers/recorded.ts';

let t: TestGateway;
let key: string;
let openai: OpenAI;
let anthropic: Anthropic;

before(async () => {
  t = await startTestGateway({ config: { simulator: { fixturesDir: OWN_FIXTURES } } });
  key = (await t.newOrg({ ownKeys: ['cloud_a', 'cloud_b'] })).key;
  openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: key, apiKey: null, baseURL: t.url, maxRetries: 0 });
});
after(() => t.close());

const onCloudA = { model: 'gemini-3.5-flash', start_within: 'now', provider: ['cloud_a'] };
const onCloudB = { model: 'claude-haiku-4-5', start_within: 'now', provider: ['cloud_b'] };
const FAILED_FINISHES = [
  'gemini-vertex/malformed-call.json',          // the non-streamed body
  'gemini-vertex/malformed-call.chunks.txt',    // the same answer streamed (assembled)
  'gemini-vertex/unexpected-tool-call.json',
];

/** The SDK's error for a 502 provider_error: the status, and the spec's code where the body has it. */
const providerError = (code: (err: any) => unknown) => (err: any): boolean => {
  assert.equal(err.status, 502, `status ${err.status}: ${err.message}`);
  assert.equal(code(err), 'provider_error');
  return true;
};

for (const file of FAILED_FINISHES) {
  test(`Chat non-streamed over cloud A: a failed finish (${file}) is 502 provider_error, not finish_reason stop`, async () => {
    const body = { ...onCloudA, messages: [{ role: 'user', content: `weather? ${sim({ replay: file })}` }] } as any;
    await assert.rejects(openai.chat.completions.create(body), providerError((err) => err.code));
  });

  test(`Messages non-streamed over cloud A: a failed finish (${file}) is 502 provider_error, not end_turn`, async () => {
    const body = { ...onCloudA, max_tokens: 500, messages: [{ role: 'user', content: `weather? ${sim({ replay: file })}` }] } as any;
    await assert.rejects(anthropic.messages.create(body), providerError((err) => err.error?.error?.code));
  });

  test(`Responses and Interactions non-streamed over cloud A: a failed finish (${file}) is 502 provider_error, not a failed body`, async () => {
    const input = `weather? ${sim({ replay: file })}`;
    await assert.rejects(openai.responses.create({ ...onCloudA, input } as any), providerError((err) => err.code));
    const res = await fetch(`${t.url}/v1/interactions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...onCloudA, input }),
    });
    assert.equal(res.status, 502);
    assert.equal(((await res.json()) as any).error.code, 'provider_error');
  });
}

test('the streamed failed finish ends in an error event in both formats (what the non-streamed answer now matches)', async () => {
  const content = `weather? ${sim({ replay: 'gemini-vertex/malformed-call.chunks.txt' })}`;
  await assert.rejects(openai.chat.completions.stream({ ...onCloudA, messages: [{ role: 'user', content }] } as any).finalChatCompletion());
  await assert.rejects(anthropic.messages.stream({ ...onCloudA, max_tokens: 500, messages: [{ role: 'user', content }] } as any).finalMessage());
});

/** The same replayed Anthropic stream on cloud_b, streamed (passthrough) and not (assembled). */
async function bothWays(file: string, extra: Record<string, unknown> = {}): Promise<{ streamed: any; plain: any }> {
  const body = { ...onCloudB, max_tokens: 5000, ...extra, messages: [{ role: 'user', content: `count ${sim({ replay: file })}` }] } as any;
  const streamed = await anthropic.messages.stream(body).finalMessage();
  const plain = await anthropic.messages.create(body);
  return { streamed, plain };
}

test('Messages non-streamed on cloud B: stop_sequence, citations and redacted_thinking as the stream says them', async () => {
  const { streamed, plain } = await bothWays('anthropic-messages/cited-stop-sequence.chunks.txt', {
    thinking: { type: 'enabled', budget_tokens: 2000 }, stop_sequences: ['THREE'],
  });
  assert.equal(streamed.stop_reason, 'stop_sequence', 'the fixture streamed as recorded');
  assert.deepEqual(plain.content, streamed.content);
  assert.equal(plain.stop_reason, streamed.stop_reason);
  assert.equal(plain.stop_sequence, streamed.stop_sequence);
  assert.deepEqual(plain.content.map((block: any) => block.type), ['thinking', 'redacted_thinking', 'text']);
  assert.equal(plain.content[2].citations.length, 1);
  assert.equal(plain.id, 'msg_fixture_cited', "the provider's id");
  // The counts charged, and the cost every non-streamed answer reports.
  assert.equal(plain.usage.input_tokens, 40);
  assert.equal(plain.usage.cache_read_input_tokens, 100);
  assert.equal(plain.usage.output_tokens, 31);
  assert.equal(plain.usage.service_tier, 'standard');
  assert.equal(typeof (plain.usage as any).cost?.total_micro_usd, 'number');
});

test('Messages non-streamed on cloud B: pause_turn and server tool blocks kept, the tool input parsed at its stop', async () => {
  const { streamed, plain } = await bothWays('anthropic-messages/pause-turn.chunks.txt', { include_cost: true });
  assert.equal(streamed.stop_reason, 'pause_turn', 'the fixture streamed as recorded');
  assert.deepEqual(plain.content, streamed.content);
  assert.equal(plain.stop_reason, 'pause_turn');
  assert.equal(plain.stop_sequence, null);
  assert.deepEqual((plain.content[1] as any).input, { query: 'weather in Oslo' });
  assert.equal(plain.content[2]!.type, 'web_search_tool_result');
  // message_delta's cumulative figures win; include_cost adds the cost and routing blocks.
  assert.deepEqual((plain.usage as any).server_tool_use, { web_search_requests: 1 });
  assert.equal(plain.usage.input_tokens, 2100);
  assert.equal(plain.usage.output_tokens, 45);
  assert.equal(typeof (plain.usage as any).cost?.total_micro_usd, 'number');
  assert.ok((plain.usage as any).routing, 'include_cost: usage.routing');
});

test('a failed finish is charged what the provider reported it used (it bills the turn), not an estimate', async () => {
  const org = await t.newOrg({ ownKeys: ['cloud_a'] });
  const client = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  for (const file of ['gemini-vertex/malformed-call.json', 'gemini-vertex/malformed-call.chunks.txt']) {
    const body = { ...onCloudA, messages: [{ role: 'user', content: `weather? ${sim({ replay: file })}` }] } as any;
    await assert.rejects(client.chat.completions.create(body), providerError((err) => err.code));
  }
  await t.gw.services.usage.flush();
  const res = await fetch(`${t.url}/v1/usage/requests?limit=10`, { headers: { authorization: `Bearer ${org.key}` } });
  const records = ((await res.json()) as any).data;
  assert.equal(records.length, 2);
  // The fixtures' usageMetadata: 50 prompt, 30 candidate tokens; gemini-3.5-flash standard 1.50 / 9.00 per M.
  for (const r of records) {
    assert.deepEqual([r.status, r.input_tokens, r.output_tokens, r.usage_estimated], [502, 50, 30, true]);
    assert.equal(r.cost_micro_usd, Math.ceil(50 * 1.5) + Math.ceil(30 * 9));
  }
});

/** An OpenAI client on its own org, with its own key on `route`. */
async function openaiOn(route: 'vendor_a' | 'vendor_c'): Promise<OpenAI> {
  const org = await t.newOrg({ ownKeys: [route] });
  return new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
}

test('Responses non-streamed on vendor A with a duration start_within (streamed upstream): the provider\'s own response, as the stream ends with it', async () => {
  const client = await openaiOn('vendor_a');
  const body = {
    model: 'gpt-5.4-mini', start_within: '00h-00m-30s', provider: ['vendor_a'],
    instructions: 'Cite your sources.', metadata: { topic: 'weather' }, tools: [{ type: 'web_search' }], include: ['message.output_text.logprobs'],
    input: `weather in Paris? ${sim({ replay: 'openai-responses/web-search-citations.chunks.txt', flex_start_ms: 0 })}`,
  } as any;
  const streamed: any = await client.responses.stream(body).finalResponse();
  const { data: plain, response } = (await client.responses.create(body).withResponse()) as { data: any; response: Response };
  assert.equal(response.headers.get('x-service-flex-applied'), 'true', 'a flex race: the provider was called streamed');
  // The SDK's stream accumulator adds `parsed` to each output_text part; all else is the provider's.
  const withoutParsed = (output: any[]): any[] => output.map((item) =>
    item.type !== 'message' ? item : { ...item, content: item.content.map(({ parsed: _, ...part }: any) => part) });
  assert.deepEqual(plain.output, withoutParsed(streamed.output));
  assert.deepEqual(plain.output.map((item: any) => [item.id, item.type]), [['ws_abc123', 'web_search_call'], ['msg_def456', 'message']],
    "the provider's item ids, the hosted tool item kept");
  const part = plain.output[1].content[0];
  assert.deepEqual(part.annotations.map((a: any) => [a.type, a.url]), [['url_citation', 'https://example.com/w']]);
  assert.deepEqual(part.logprobs.map((l: any) => [l.token, l.logprob]), [['Sunny', -0.01]]);
  assert.equal(plain.id, 'resp_ws1', "the provider's response id");
  assert.equal(plain.id, streamed.id);
  assert.equal(plain.store, true);
  assert.equal(plain.store, streamed.store);
  assert.deepEqual(plain.metadata, streamed.metadata);
  assert.equal(plain.instructions, streamed.instructions);
  assert.deepEqual(plain.tools, streamed.tools);
  assert.equal(plain.service_tier, 'flex');
  // The provider's usage, with the cost every non-streamed answer reports.
  const { cost, ...usage } = plain.usage;
  assert.deepEqual(usage, streamed.usage);
  assert.equal(typeof cost?.total_micro_usd, 'number');
  assert.equal(String(cost.total_micro_usd), response.headers.get('x-service-cost'));
});

test('Responses on vendor C (translated): response.created and the non-streamed answer echo the request\'s fields', async () => {
  const client = await openaiOn('vendor_c');
  const body = {
    model: 'claude-haiku-4-5', start_within: 'now', provider: ['vendor_c'],
    instructions: 'Be brief.', metadata: { ticket: 'T-1' }, max_output_tokens: 300, input: 'Say hello',
  } as any;
  const plain: any = await client.responses.create(body);
  const events: any[] = [];
  for await (const ev of await client.responses.create({ ...body, stream: true }) as any) events.push(ev);
  const created = events.find((ev) => ev.type === 'response.created').response;
  const completed = events.find((ev) => ev.type === 'response.completed').response;
  for (const [what, res] of [['non-streamed', plain], ['response.created', created], ['response.completed', completed]] as const) {
    assert.equal(res.instructions, 'Be brief.', what);
    assert.deepEqual(res.metadata, { ticket: 'T-1' }, what);
    assert.equal(res.max_output_tokens, 300, what);
    assert.equal(res.store, false, `${what}: an answer translated from another API is stored by no one`);
  }
});
