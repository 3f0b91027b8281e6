// A caller's reasoning reaches Gemini on cloud_a in the form the model's generation takes: Gemini 3
// a thinking level, Gemini 2.5 a thinking budget (Vertex answers 400 "Thinking level is not
// supported for this model." to a level, and refuses a budget above 24576 on Flash), Gemini 2.0 no
// thinking config at all (Vertex refuses any). The simulator refuses each as Vertex does.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

before(async () => {
  t = await startTestGateway();
  const org = await t.newOrg({ balance: 100_000_000 });
  openai = new OpenAI({ apiKey: org.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: org.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
});
after(() => t.close());

const ROUTE = { start_within: 'now', provider: ['cloud_a'] };

test('Chat reasoning_effort on gemini-2.5-flash over cloud_a: answered, with thinking (a budget, not a level)', async () => {
  const { data, response } = await openai.chat.completions.create({
    model: 'gemini-2.5-flash', reasoning_effort: 'low', messages: [{ role: 'user', content: 'hi' }], ...ROUTE,
  } as any).withResponse();
  assert.equal(response.headers.get('x-service-served-provider'), 'cloud_a');
  assert.ok(data.choices[0]!.message.content, 'an answer');
  assert.ok((data.usage?.completion_tokens_details?.reasoning_tokens ?? 0) > 0, 'the model thought');
});

test('Responses reasoning.effort on gemini-2.5-flash over cloud_a: completed, with thinking', async () => {
  const res: any = await openai.responses.create({ model: 'gemini-2.5-flash', reasoning: { effort: 'medium' }, input: 'hi', ...ROUTE } as any);
  assert.equal(res.status, 'completed');
  assert.ok(res.usage.output_tokens_details.reasoning_tokens > 0, 'the model thought');
});

test('Messages thinking budget above Flash\'s 24576 on gemini-2.5-flash over cloud_a: answered (held to the ceiling)', async () => {
  // Claude Code's largest budget; the SDK streams a body with this max_tokens.
  const msg = await anthropic.messages.stream({
    model: 'gemini-2.5-flash', max_tokens: 40_000, thinking: { type: 'enabled', budget_tokens: 31_999 },
    messages: [{ role: 'user', content: 'hi' }], ...ROUTE,
  } as any).finalMessage();
  assert.equal(msg.stop_reason, 'end_turn');
  assert.ok(msg.content.some((block) => block.type === 'thinking'), 'the model thought');
});

test('gemini-2.0-flash over cloud_a: reasoning from every format is left out, and the model answers', async () => {
  const chat = await openai.chat.completions.create({
    model: 'gemini-2.0-flash', reasoning_effort: 'high', messages: [{ role: 'user', content: 'hi' }], ...ROUTE,
  } as any);
  assert.ok(chat.choices[0]!.message.content);
  assert.equal(chat.usage?.completion_tokens_details?.reasoning_tokens ?? 0, 0);
  const res: any = await openai.responses.create({ model: 'gemini-2.0-flash', reasoning: { effort: 'low' }, input: 'hi', ...ROUTE } as any);
  assert.equal(res.status, 'completed');
  const msg = await anthropic.messages.create({
    model: 'gemini-2.0-flash', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 },
    messages: [{ role: 'user', content: 'hi' }], ...ROUTE,
  } as any);
  assert.equal(msg.stop_reason, 'end_turn');
  assert.ok(!msg.content.some((block) => block.type === 'thinking'));
});

test('a Gemini 3 model over cloud_a still takes a thinking level from an effort', async () => {
  const chat = await openai.chat.completions.create({
    model: 'gemini-3.1-pro-preview', reasoning_effort: 'high', messages: [{ role: 'user', content: 'hi' }], ...ROUTE,
  } as any);
  // The simulator thinks 32 tokens at level HIGH, 16 for a budget.
  assert.equal(chat.usage?.completion_tokens_details?.reasoning_tokens, 32);
});
