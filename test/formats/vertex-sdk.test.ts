// The Vertex encoders' output parsed by @google/genai's generateContent surface (the same
// GenerateContentResponse shape the Gemini API and Vertex share), served from a local server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { GoogleGenAI } from '@google/genai';
import { vertexCodec } from '../../lib/formats/vertex/index.ts';
import type { EncodeContext } from '../../lib/formats/types.ts';
import { closeCodecServers, serveScenario } from '../helpers/codec-server.ts';
import { type IREvent, type IRResponse, zeroUsage } from '../../lib/ir.ts';

const CTX: EncodeContext = { id: 'resp_sdk', model: 'gemini-gw', createdAt: 1_760_000_000, tier: 'flex' };
let scenario: { events: IREvent[] } | { response: IRResponse } = { events: [] };
let ai: GoogleGenAI;

before(async () => {
  const url = await serveScenario(vertexCodec, CTX, () => scenario);
  ai = new GoogleGenAI({ apiKey: 'x', httpOptions: { baseUrl: url } });
});
after(closeCodecServers);

test('generateContentStream reads text, thoughts, the function call and final usage', async () => {
  scenario = { events: [
    { type: 'start' },
    { type: 'block_start', index: 0, block: { kind: 'reasoning' } }, { type: 'reasoning_delta', index: 0, text: 'thinking' }, { type: 'block_stop', index: 0 },
    { type: 'block_start', index: 1, block: { kind: 'text' } }, { type: 'text_delta', index: 1, text: 'Hello ' }, { type: 'text_delta', index: 1, text: 'world' }, { type: 'block_stop', index: 1 },
    { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'c1', name: 'f' } }, { type: 'signature', index: 2, signature: 'FS' }, { type: 'args_delta', index: 2, json: '{"x":[1]}' }, { type: 'block_stop', index: 2 },
    { type: 'finish', reason: 'tool_use', usage: { ...zeroUsage(), inputTokens: 11, outputTokens: 7, reasoningTokens: 3 } },
  ] };
  let text = '';
  const calls: unknown[] = [];
  let last: any;
  for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-gw', contents: 'hi' })) {
    const parts = chunk.candidates?.[0]?.content?.parts ?? [];
    text += parts.filter((p) => !p.thought && p.text).map((p) => p.text).join('');
    for (const fc of chunk.functionCalls ?? []) calls.push(fc);
    last = chunk;
  }
  assert.equal(text, 'Hello world');
  assert.deepEqual(calls, [{ name: 'f', args: { x: [1] } }]);
  assert.equal(last.candidates[0].finishReason, 'STOP');
  assert.equal(last.usageMetadata.promptTokenCount, 11);
  assert.equal(last.usageMetadata.thoughtsTokenCount, 3);
  assert.equal(last.usageMetadata.candidatesTokenCount, 4);
  assert.equal(last.responseId, 'resp_sdk');
});

test('generateContent reads encodeResponse', async () => {
  scenario = { response: {
    id: 'x', model: 'claude', stopReason: 'end', tier: 'flex',
    blocks: [{ kind: 'text', text: 'All done.' }], usage: { ...zeroUsage(), inputTokens: 4, outputTokens: 3 },
  } };
  const res = await ai.models.generateContent({ model: 'gemini-gw', contents: 'hi' });
  assert.equal(res.text, 'All done.');
  assert.equal(res.usageMetadata?.totalTokenCount, 7);
  assert.equal(res.candidates?.[0]?.finishReason, 'STOP');
});
