// A translated caller's reasoning controls reach each model in the form it takes, and a Messages
// caller's thinking signatures reach only the vendor that made them. Each case is a body the real
// provider answers 400, which the simulator refuses the same way (lib/simulator/vendor-rules.ts):
// manual thinking or any sampling parameter on Claude Opus 4.7+, temperature/top_p beside thinking
// on any Claude, thinking level MINIMAL on Gemini 3 Pro and Flash 3.7+, effort `minimal` on
// GPT-5.2+, and a Claude signature sent to Gemini ("Corrupted thought signature.").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordUpstreamBodies, type UpstreamBodies } from '../helpers/upstream-bodies.ts';

let t: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
let sent: UpstreamBodies;
let key: string;

before(async () => {
  t = await startTestGateway();
  const org = await t.newOrg({ balance: 1_000_000_000 });
  key = org.key;
  openai = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: org.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  sent = recordUpstreamBodies(t, ['vendor_a', 'vendor_b', 'vendor_c', 'cloud_a', 'cloud_b']);
});
after(() => t.close());

const on = (route: string) => ({ start_within: 'now', provider: [route] });
const chat = (model: string, route: string, extra: Record<string, unknown>) => openai.chat.completions.create({
  model, messages: [{ role: 'user', content: 'hi' }], ...extra, ...on(route),
} as any);
const reasoningTokens = (res: any): number => res.usage?.completion_tokens_details?.reasoning_tokens ?? 0;

test('claude-opus-4-8 (adaptive thinking only): a Chat, Responses or Interactions effort is adaptive thinking with output_config.effort, on vendor_c and cloud_b', async () => {
  for (const route of ['vendor_c', 'cloud_b'] as const) {
    const res = await chat('claude-opus-4-8', route, { reasoning_effort: 'high' });
    assert.ok(reasoningTokens(res) > 0, `${route}: the model thought`);
    assert.deepEqual(sent.last(route).thinking, { type: 'adaptive', display: 'summarized' });
    assert.equal(sent.last(route).output_config.effort, 'high');
    assert.equal(sent.last(route).max_tokens, 4096 + 16384, 'adaptive thinking gets the room high\'s budget would');
    const minimal: any = await openai.responses.create({ model: 'claude-opus-4-8', reasoning: { effort: 'minimal' }, input: 'hi', ...on(route) } as any);
    assert.equal(minimal.status, 'completed');
    assert.equal(sent.last(route).output_config.effort, 'low', 'minimal is held to the lowest effort Claude takes');
    const interactions = await fetch(`${t.url}/v1/interactions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-opus-4-8', input: 'hi', generation_config: { thinking_level: 'medium' }, ...on(route) }),
    });
    assert.equal(interactions.status, 200, await interactions.clone().text());
    assert.equal(sent.last(route).output_config.effort, 'medium');
  }
});

test('claude-opus-4-8 refuses sampling parameters: a Chat caller\'s temperature and top_p are dropped, with or without reasoning', async () => {
  for (const route of ['vendor_c', 'cloud_b'] as const) {
    const res = await chat('claude-opus-4-8', route, { temperature: 0.2, top_p: 0.5 });
    assert.ok(res.choices[0]!.message.content, `${route}: answered`);
    assert.equal(sent.last(route).temperature, undefined);
    assert.equal(sent.last(route).top_p, undefined);
  }
});

test('thinking beside temperature on claude-sonnet-4-6 and claude-haiku-4-5: the thinking is kept, temperature other than 1 and top_p below 0.95 dropped', async () => {
  for (const model of ['claude-sonnet-4-6', 'claude-haiku-4-5']) {
    const res = await chat(model, 'vendor_c', { reasoning_effort: 'medium', temperature: 0.2, top_p: 0.5 });
    assert.ok(reasoningTokens(res) > 0, `${model}: the model thought`);
    assert.deepEqual(sent.last('vendor_c').thinking, { type: 'enabled', budget_tokens: 4096 });
    const kept = await chat(model, 'vendor_c', { reasoning_effort: 'medium', temperature: 1, top_p: 0.97 });
    assert.ok(reasoningTokens(kept) > 0);
    assert.equal(sent.last('vendor_c').temperature, 1, 'a value thinking allows goes as sent');
    assert.equal(sent.last('vendor_c').top_p, 0.97);
    const responses: any = await openai.responses.create({ model, reasoning: { effort: 'medium' }, temperature: 0.3, input: 'hi', ...on('cloud_b') } as any);
    assert.equal(responses.status, 'completed');
    assert.ok(responses.usage.output_tokens_details.reasoning_tokens > 0);
    const plain = await chat(model, 'vendor_c', { temperature: 0.2 });
    assert.ok(plain.choices[0]!.message.content);
    assert.equal(sent.last('vendor_c').temperature, 0.2, 'without thinking the temperature goes');
  }
});

test('effort minimal: LOW on gemini-3.1-pro-preview and gemini-3.8-flash (cloud_a, vendor_b), MINIMAL kept on gemini-3.5-flash', async () => {
  for (const model of ['gemini-3.1-pro-preview', 'gemini-3.8-flash']) {
    const vertex = await chat(model, 'cloud_a', { reasoning_effort: 'minimal' });
    assert.ok(vertex.choices[0]!.message.content, `${model} on cloud_a`);
    assert.equal(sent.last('cloud_a').generationConfig.thinkingConfig.thinkingLevel, 'LOW');
    const gemini = await chat(model, 'vendor_b', { reasoning_effort: 'minimal' });
    assert.ok(gemini.choices[0]!.message.content, `${model} on vendor_b`);
    assert.equal(sent.last('vendor_b').generation_config.thinking_level, 'low');
  }
  await chat('gemini-3.5-flash', 'cloud_a', { reasoning_effort: 'minimal' });
  assert.equal(sent.last('cloud_a').generationConfig.thinkingConfig.thinkingLevel, 'MINIMAL');
});

test('effort minimal on gpt-5.5, gpt-5.4, gpt-5.4-mini from Chat and Interactions callers: low', async () => {
  for (const model of ['gpt-5.5', 'gpt-5.4', 'gpt-5.4-mini']) {
    const res = await chat(model, 'vendor_a', { reasoning_effort: 'minimal' });
    assert.ok(res.choices[0]!.message.content, model);
    assert.equal(sent.last('vendor_a').reasoning.effort, 'low');
    const interactions = await fetch(`${t.url}/v1/interactions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, input: 'hi', generation_config: { thinking_level: 'minimal' }, ...on('vendor_a') }),
    });
    assert.equal(interactions.status, 200, await interactions.clone().text());
    assert.equal(sent.last('vendor_a').reasoning.effort, 'low');
  }
});

test('effort xhigh and max think (as high) on Claude and Gemini, and as asked on adaptive Claude', async () => {
  for (const effort of ['xhigh', 'max']) {
    const sonnet = await chat('claude-sonnet-4-6', 'vendor_c', { reasoning_effort: effort });
    assert.ok(reasoningTokens(sonnet) > 0, `${effort} on Sonnet: the model thought`);
    assert.equal(sent.last('vendor_c').thinking.budget_tokens, 16384);
    const opus: any = await openai.responses.create({ model: 'claude-opus-4-8', reasoning: { effort }, input: 'hi', ...on('vendor_c') } as any);
    assert.ok(opus.usage.output_tokens_details.reasoning_tokens > 0);
    assert.equal(sent.last('vendor_c').output_config.effort, effort);
    for (const route of ['cloud_a', 'vendor_b']) {
      const gemini = await chat('gemini-3.5-flash', route, { reasoning_effort: effort });
      assert.ok(reasoningTokens(gemini) > 0, `${effort} on gemini-3.5-flash over ${route}: the model thought`);
    }
    assert.equal(sent.last('cloud_a').generationConfig.thinkingConfig.thinkingLevel, 'HIGH');
    assert.equal(sent.last('vendor_b').generation_config.thinking_level, 'high');
  }
});

const tool = { name: 'get_weather', description: 'w', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
const thinking = { type: 'enabled' as const, budget_tokens: 2000 };

/** A Messages tool-loop turn on `model` over `route`, after `history`. */
async function turn(model: string, route: string, history: Anthropic.MessageParam[]) {
  return anthropic.messages.create({ model, max_tokens: 8000, thinking, tools: [tool], messages: history, ...on(route) } as any) as Promise<Anthropic.Message>;
}
const loop = (first: Anthropic.Message): Anthropic.MessageParam[] => [
  { role: 'user', content: 'weather?' },
  { role: 'assistant', content: first.content as any },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: first.content.find((b) => b.type === 'tool_use')!.id as string, content: 'sunny' }] },
];

test('a Messages caller moving from Claude to Gemini mid tool loop: Claude\'s signature stays behind, the call goes with the skip value', async () => {
  const first = await turn('claude-sonnet-4-6', 'vendor_c', [{ role: 'user', content: 'weather? #sim{"tool_call":"get_weather"}' }]);
  const claudeSig = (first.content.find((b) => b.type === 'thinking') as any).signature as string;
  assert.ok(claudeSig && !claudeSig.includes(':'), 'Claude\'s own signature goes to the caller untagged');
  for (const route of ['cloud_a', 'vendor_b'] as const) {
    const next = await turn('gemini-3.5-flash', route, loop(first));
    assert.equal(next.stop_reason, 'end_turn', `${route}: answered`);
    const body = JSON.stringify(sent.last(route));
    assert.ok(!body.includes(claudeSig), `${route}: Claude's signature is not sent to Gemini`);
    assert.ok(body.includes('skip_thought_signature_validator'), `${route}: the replayed call is sent with the skip value`);
  }
});

test('a Messages caller on Gemini gets its signatures tagged gemini-signature:, and Gemini gets them back as its own', async () => {
  for (const route of ['cloud_a', 'vendor_b'] as const) {
    const first = await turn('gemini-3.5-flash', route, [{ role: 'user', content: 'weather? #sim{"tool_call":"get_weather"}' }]);
    const signatures = first.content.filter((b) => b.type === 'thinking').map((b: any) => b.signature as string);
    assert.ok(signatures.length && signatures.every((s) => s.startsWith('gemini-signature:')), `${route}: ${signatures}`);
    const next = await turn('gemini-3.5-flash', route, loop(first));
    assert.equal(next.stop_reason, 'end_turn');
    const body = JSON.stringify(sent.last(route));
    for (const s of signatures) assert.ok(body.includes(JSON.stringify(s.slice('gemini-signature:'.length))), `${route}: Gemini's own signature goes back untagged`);
    assert.ok(!body.includes('gemini-signature:'));
    // The same conversation moved to Claude: Gemini's signatures stay behind.
    const claude = await turn('claude-sonnet-4-6', 'vendor_c', loop(first));
    assert.ok(claude.content.length);
  }
});
