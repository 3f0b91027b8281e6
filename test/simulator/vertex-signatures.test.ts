// cloud_a simulator, Gemini 3 thought signatures: a gemini-3* model signs the first function call
// it makes and answers 400 INVALID_ARGUMENT when a current-turn call comes back without one, as
// Gemini 3 does; earlier turns and other models are not checked.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Simulator } from '../../lib/simulator/server.ts';
import { directive, parseSSE, start, vertexToken } from './helpers.ts';

let sim: Simulator;
let token: string;
before(async () => {
  sim = await start();
  token = await vertexToken(sim);
});
after(() => sim.close());

const path = (model: string, verb: string) => `/v1/projects/p1/locations/global/publishers/google/models/${model}:${verb}`;
const call = (model: string, verb: string, body: object) => fetch(`${sim.url}${path(model, verb)}${verb === 'streamGenerateContent' ? '?alt=sse' : ''}`, {
  method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
});
const TOOLS = [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }] }];

/** A tool round trip's second request: the user's text, the model's call(s), the results. */
const replay = (calls: Record<string, unknown>[], earlier: Record<string, unknown>[] = []) => ({
  tools: TOOLS,
  contents: [
    ...earlier,
    { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
    { role: 'model', parts: calls },
    { role: 'user', parts: calls.map(() => ({ functionResponse: { name: 'get_weather', response: { result: 'sunny' } } })) },
  ],
});
const fc = (city: string, thoughtSignature?: string) => ({ functionCall: { name: 'get_weather', args: { city } }, ...(thoughtSignature ? { thoughtSignature } : {}) });

test('a gemini-3 model signs its function call (whole body and stream); gemini-2.5 without thinking does not', async () => {
  const ask = { tools: TOOLS, contents: [{ role: 'user', parts: [{ text: `Weather? ${directive({ tool_call: 'get_weather' })}` }] }] };
  const body = await (await call('gemini-3.5-flash', 'generateContent', ask)).json() as Record<string, any>;
  const part = body.candidates[0].content.parts.find((p: any) => p.functionCall);
  assert.equal(typeof part.thoughtSignature, 'string');
  assert.ok(part.thoughtSignature.length > 0);
  const chunks = parseSSE(await (await call('gemini-3.5-flash', 'streamGenerateContent', ask)).text()).map((f) => JSON.parse(f.data));
  const streamed = chunks.flatMap((c: any) => c.candidates[0].content.parts).find((p: any) => p.functionCall);
  assert.equal(typeof streamed.thoughtSignature, 'string');
  const old = await (await call('gemini-2.5-flash', 'generateContent', ask)).json() as Record<string, any>;
  assert.equal('thoughtSignature' in old.candidates[0].content.parts[0], false);
});

test('gemini-3: a current-turn call without its signature → 400 INVALID_ARGUMENT naming the call and content block', async () => {
  const res = await call('gemini-3.5-flash', 'generateContent', replay([fc('Paris')]));
  assert.equal(res.status, 400);
  const body = await res.json() as { error: { code: number; status: string; message: string } };
  assert.equal(body.error.status, 'INVALID_ARGUMENT');
  assert.match(body.error.message, /function call `get_weather` in the 2\. content block is missing a `thought_signature`/);
});

test('gemini-3: a signed call, the skip value, and unsigned parallel calls after the first are accepted', async () => {
  assert.equal((await call('gemini-3.5-flash', 'generateContent', replay([fc('Paris', 'REAL')]))).status, 200);
  assert.equal((await call('gemini-3.5-flash', 'generateContent', replay([fc('Paris', 'skip_thought_signature_validator')]))).status, 200);
  assert.equal((await call('gemini-3.5-flash', 'generateContent', replay([fc('Paris', 'REAL'), fc('Rome')]))).status, 200);
  assert.equal((await call('gemini-3.5-flash', 'streamGenerateContent', replay([fc('Paris'), fc('Rome', 'LATE')]))).status, 400);
});

test('gemini-3: earlier turns are not checked; other models are not checked', async () => {
  const earlier = [
    { role: 'user', parts: [{ text: 'Weather in Oslo?' }] },
    { role: 'model', parts: [fc('Oslo')] },
    { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: 'snow' } } }] },
    { role: 'model', parts: [{ text: 'Snow.' }] },
  ];
  assert.equal((await call('gemini-3.5-flash', 'generateContent', replay([fc('Paris', 'REAL')], earlier))).status, 200);
  assert.equal((await call('gemini-2.5-flash', 'generateContent', replay([fc('Paris')]))).status, 200);
});
