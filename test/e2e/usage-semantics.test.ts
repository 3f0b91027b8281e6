// What a translated answer's usage says means what the caller's format means by it, as the
// provider's own answer would say it on a passthrough: Gemini's tool-use prompt tokens reach an
// Interactions caller in total_tool_use_tokens (outside total_input_tokens) from cloud_a's Vertex
// wire as from vendor_b's, and a translated Responses stream that fails after commit reports no
// usage in response.failed (null, as OpenAI's own response.failed does) rather than a made-up one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoogleGenAI } from '@google/genai';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
let key: string;
let genai: any;
const fixtures = mkdtempSync(join(tmpdir(), 'usage-semantics-'));

// One Gemini answer that read 40 tool-use prompt tokens, as each Gemini wire writes it.
const INTERACTION_USAGE = {
  total_tokens: 1350, total_input_tokens: 1010, total_cached_tokens: 1000, total_output_tokens: 100,
  total_tool_use_tokens: 40, total_thought_tokens: 200,
};
const VERTEX_USAGE = {
  promptTokenCount: 1010, cachedContentTokenCount: 1000, candidatesTokenCount: 100, thoughtsTokenCount: 200,
  toolUsePromptTokenCount: 40, totalTokenCount: 1350, trafficType: 'ON_DEMAND',
};

before(async () => {
  const interaction = (status: string, usage?: object) => ({
    id: 'v1_u', status, ...(usage ? { usage } : {}), object: 'interaction', model: 'gemini-3.5-flash',
    created: '2026-11-01T12:00:00Z', updated: '2026-11-01T12:00:01Z', service_tier: 'standard',
  });
  const lines = (payloads: object[]) => payloads.map((p) => JSON.stringify(p)).join('\n') + '\n';
  writeFileSync(join(fixtures, 'int.json'), JSON.stringify({
    ...interaction('completed', INTERACTION_USAGE), steps: [{ type: 'model_output', content: [{ type: 'text', text: 'Hello.' }] }],
  }));
  writeFileSync(join(fixtures, 'int.chunks.txt'), lines([
    { event_type: 'interaction.created', interaction: interaction('in_progress') },
    { event_type: 'step.start', index: 0, step: { type: 'model_output' } },
    { event_type: 'step.delta', index: 0, delta: { type: 'text', text: 'Hello.' } },
    { event_type: 'step.stop', index: 0 },
    { event_type: 'interaction.completed', interaction: interaction('completed', INTERACTION_USAGE) },
  ]));
  const chunk = (text: string, finish?: object) => ({
    candidates: [{ content: { role: 'model', parts: [{ text }] }, ...finish }],
    modelVersion: 'gemini-3.5-flash', responseId: 'vx_u', createTime: '2026-11-01T12:00:00Z',
  });
  writeFileSync(join(fixtures, 'vtx.json'), JSON.stringify({ ...chunk('Hello.', { finishReason: 'STOP' }), usageMetadata: VERTEX_USAGE }));
  writeFileSync(join(fixtures, 'vtx.chunks.txt'), lines([
    { ...chunk('Hello.'), usageMetadata: { trafficType: 'ON_DEMAND' } },
    { ...chunk('', { finishReason: 'STOP' }), usageMetadata: VERTEX_USAGE },
  ]));
  t = await startTestGateway({ config: { simulator: { fixturesDir: fixtures } } });
  ({ key } = await t.newOrg({ balance: 100_000_000, ownKeys: ['cloud_a'] }));
  genai = new GoogleGenAI({ apiKey: 'unused', apiVersion: 'v1', httpOptions: { baseUrl: t.url, headers: { authorization: `Bearer ${key}` } } });
});
after(async () => { await t.close(); rmSync(fixtures, { recursive: true, force: true }); });

/** The usage an Interactions caller reads through the SDK, streamed or not. */
async function interactionUsage(route: string, replay: string, stream: boolean): Promise<any> {
  const body = { model: 'gemini-3.5-flash', provider: [route], start_within: 'now', stream, input: `hi ${sim({ replay })}` };
  const answer = await genai.interactions.create(body, { maxRetries: 0 });
  if (!stream) return answer.usage;
  const events: any[] = [];
  for await (const ev of answer) events.push(ev);
  return events.find((ev) => ev.event_type === 'interaction.completed')?.interaction.usage;
}

for (const stream of [false, true]) {
  test(`an Interactions caller reads Gemini's tool-use prompt tokens apart from its input on cloud_a as on vendor_b (${stream ? 'stream' : 'json'})`, async () => {
    const file = stream ? 'chunks.txt' : 'json';
    const passthrough = await interactionUsage('vendor_b', `int.${file}`, stream);
    const translated = await interactionUsage('cloud_a', `vtx.${file}`, stream);
    const figures = (u: any) => ({
      total_input_tokens: u.total_input_tokens, total_tool_use_tokens: u.total_tool_use_tokens, total_cached_tokens: u.total_cached_tokens,
      total_output_tokens: u.total_output_tokens, total_thought_tokens: u.total_thought_tokens, total_tokens: u.total_tokens,
    });
    assert.deepEqual(figures(passthrough), figures(INTERACTION_USAGE));
    assert.deepEqual(figures(translated), figures(INTERACTION_USAGE));
  });
}

/** The frames of a Responses stream that fails after 50 of 100 output tokens on `route`. */
async function failingStream(route: string, model: string): Promise<any[]> {
  const res = await fetch(`${t.url}/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, provider: [route], start_within: 'now', stream: true, input: `hi ${sim({ output_tokens: 100, error_after_tokens: 50 })}` }),
  });
  const text = await res.text();
  return text.split('\n').filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]').map((l) => JSON.parse(l.slice(6)));
}

for (const [route, model] of [['vendor_a', 'gpt-5.4-mini'], ['vendor_b', 'gemini-3.5-flash'], ['cloud_a', 'gemini-3.5-flash'], ['vendor_c', 'claude-haiku-4-5']]) {
  test(`a Responses stream that fails after commit on ${route} reports no usage in response.failed`, async () => {
    const frames = await failingStream(route, model);
    assert.equal(frames.filter((f) => f.type === 'response.output_text.delta').length, 50, 'the failure came after the commit');
    const failed = frames.find((f) => f.type === 'response.failed');
    assert.ok(failed, JSON.stringify(frames.at(-1)));
    // Anthropic's message_start count (output_tokens 1) and a zero usage are not what was used.
    assert.equal(failed.response.usage, null);
  });
}
