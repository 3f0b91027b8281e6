// Coding agents on another vendor's model, end to end with the official SDKs against the real
// gateway and its simulator: Codex (Responses) and Chat callers on Claude, Claude Code (Messages)
// on GPT. The simulator does not enforce Anthropic's thinking rules (budget below max_tokens, no
// thinking with a forced tool choice, signed thinking before the last turn's tool_use), so the
// tests read the body each route adapter built.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { recordUpstreamBodies, type UpstreamBodies } from '../helpers/upstream-bodies.ts';
import type { RouteName } from '../../lib/routes.ts';
import { ANTHROPIC_SIGNATURE_TAG, GEMINI_SIGNATURE_TAG, OPENAI_ENCRYPTED_TAG } from '../../lib/formats/reasoning-tags.ts';

let t: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
/** The bodies the route adapters built. */
let recorded: UpstreamBodies;

before(async () => {
  t = await startTestGateway();
  const key = (await t.newOrg({ balance: 1_000_000_000 })).key;
  openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  recorded = recordUpstreamBodies(t, ['vendor_a', 'vendor_b', 'vendor_c', 'cloud_b']);
});
after(() => t.close());

const last = (route: RouteName): any => recorded.last(route);
const CLAUDE = 'claude-sonnet-4-6';
const GPT = 'gpt-5.4-mini';
const NOW = { start_within: 'now' };
const SHELL = {
  type: 'function' as const, name: 'shell', description: 'Run a command', strict: false,
  parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
};

for (const route of ['vendor_c', 'cloud_b'] as const) {
  // cloud_b gets the budget's room once lib/providers/bedrock.ts sends maxTokensFor(body, cap)
  // (lib/formats/messages/thinking.ts) as its default, as vendor_c does.
  test(`Codex and Chat on Claude over ${route}, effort and no max: max_tokens above the thinking budget`, async () => {
    for (const [effort, budget] of [['medium', 4096], ['high', 16384]] as const) {
      const r = await openai.responses.stream({ model: CLAUDE, input: `hi ${sim({ output_tokens: 3 })}`, reasoning: { effort }, provider: [route], ...NOW } as any).finalResponse();
      assert.equal(r.status, 'completed');
      const body = last(route);
      assert.equal(body.thinking.budget_tokens, budget, effort);
      assert.ok(body.thinking.budget_tokens < body.max_tokens, `${effort}: budget ${budget} < max_tokens ${body.max_tokens}`);
    }
    await openai.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high', provider: [route], ...NOW } as any);
    const body = last(route);
    assert.ok(body.thinking.budget_tokens < body.max_tokens, JSON.stringify({ thinking: body.thinking, max: body.max_tokens }));
  });
}

test('Codex on Claude with a forced tool choice: no thinking is sent beside it', async () => {
  for (const tool_choice of ['required', { type: 'function', name: 'shell' }]) {
    const r = await openai.responses.create({
      model: CLAUDE, input: `List ${sim({ tool_call: 'shell' })}`, reasoning: { effort: 'low' }, max_output_tokens: 8000, tools: [SHELL], tool_choice, ...NOW,
    } as any);
    assert.equal(r.status, 'completed');
    const body = last('vendor_c');
    assert.equal(body.thinking, undefined, JSON.stringify(tool_choice));
    assert.ok(['any', 'tool'].includes(body.tool_choice.type));
  }
});

for (const streamed of [true, false]) {
  test(`Codex on Claude (${streamed ? 'streamed' : 'not streamed'}): the thinking signature rides in encrypted_content and turn 2 sends it back signed`, async () => {
    const ask = `List files ${sim({ tool_call: 'shell', tool_args: { cmd: 'ls' } })}`;
    const base = { model: CLAUDE, reasoning: { effort: 'medium' }, store: false, include: ['reasoning.encrypted_content'], tools: [SHELL], max_output_tokens: 20000, ...NOW } as any;
    const ask1 = { ...base, input: [{ role: 'user', content: ask }] };
    const r1: any = streamed ? await openai.responses.stream(ask1).finalResponse() : await openai.responses.create(ask1);
    const reasoning = r1.output.find((o: any) => o.type === 'reasoning');
    assert.ok(reasoning?.encrypted_content?.startsWith(ANTHROPIC_SIGNATURE_TAG), JSON.stringify(r1.output));
    const call = r1.output.find((o: any) => o.type === 'function_call');
    const ask2 = { ...base, input: [{ role: 'user', content: ask }, ...r1.output, { type: 'function_call_output', call_id: call.call_id, output: 'a.txt' }] };
    const r2: any = streamed ? await openai.responses.stream(ask2).finalResponse() : await openai.responses.create(ask2);
    assert.equal(r2.status, 'completed');
    const body = last('vendor_c');
    const assistant = body.messages.find((m: any) => m.role === 'assistant');
    assert.deepEqual(assistant.content.map((b: any) => b.type), ['thinking', 'tool_use']);
    assert.equal(assistant.content[0].signature, reasoning.encrypted_content.slice(ANTHROPIC_SIGNATURE_TAG.length));
    assert.equal(assistant.content[0].thinking, reasoning.summary[0].text);
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 4096 });
  });
}

test('Chat on Claude: turn 2 of a tool loop (no thinking block to send back) goes without thinking', async () => {
  const tools = [{ type: 'function' as const, function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
  const ask = `read it ${sim({ tool_call: 'read', tool_args: { path: 'a.ts' } })}`;
  const base = { model: CLAUDE, reasoning_effort: 'medium', tools, max_completion_tokens: 20000, ...NOW } as any;
  const c1: any = await openai.chat.completions.stream({ ...base, messages: [{ role: 'user', content: ask }] }).finalChatCompletion();
  assert.deepEqual(last('vendor_c').thinking, { type: 'enabled', budget_tokens: 4096 }, 'turn 1 thinks');
  const call = c1.choices[0].message.tool_calls[0];
  const c2: any = await openai.chat.completions.create({
    ...base, messages: [{ role: 'user', content: ask }, c1.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'x' }],
  });
  assert.equal(c2.choices[0].finish_reason, 'stop');
  const body = last('vendor_c');
  assert.equal(body.thinking, undefined);
  assert.deepEqual(body.messages[1].content.map((b: any) => b.type), ['tool_use']);
});

for (const streamed of [true, false]) {
  test(`Claude Code on GPT (${streamed ? 'streamed' : 'not streamed'}): the encrypted reasoning is the thinking signature and goes back to vendor A`, async () => {
    const tools = [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }];
    const ask = `Open README ${sim({ tool_call: 'read_file', tool_args: { path: 'README.md' } })}`;
    const base = { model: GPT, max_tokens: 20000, thinking: { type: 'enabled', budget_tokens: 4096 }, tools, ...NOW } as any;
    const ask1 = { ...base, messages: [{ role: 'user', content: ask }] };
    const first: any = streamed ? await anthropic.messages.stream(ask1).finalMessage() : await anthropic.messages.create(ask1);
    const thinking = first.content.find((b: any) => b.type === 'thinking');
    assert.ok(thinking?.signature.startsWith(OPENAI_ENCRYPTED_TAG), JSON.stringify(first.content));
    const toolUse = first.content.find((b: any) => b.type === 'tool_use');
    const ask2 = { ...base, messages: [
      { role: 'user', content: ask }, { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '# readme' }] },
    ] };
    const second: any = streamed ? await anthropic.messages.stream(ask2).finalMessage() : await anthropic.messages.create(ask2);
    assert.equal(second.stop_reason, 'end_turn');
    const body = last('vendor_a');
    const reasoning = body.input.filter((i: any) => i.type === 'reasoning');
    assert.equal(reasoning.length, 1);
    assert.equal(reasoning[0].encrypted_content, thinking.signature.slice(OPENAI_ENCRYPTED_TAG.length));
    assert.deepEqual(body.input.map((i: any) => i.type), ['message', 'reasoning', 'function_call', 'function_call_output']);
  });
}

test('Codex tool output with an image, on Claude and Gemini: answered; Claude gets the result, then the image', async () => {
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
  const input = [
    { role: 'user', content: 'look at the screenshot' },
    { type: 'function_call', call_id: 'call_1', name: 'view_image', arguments: '{"path":"s.png"}' },
    { type: 'function_call_output', call_id: 'call_1', output: [
      { type: 'input_text', text: 'the screen:' }, { type: 'input_image', image_url: `data:image/png;base64,${PNG}` },
    ] },
  ];
  const tools = [{ type: 'function', name: 'view_image', parameters: { type: 'object', properties: { path: { type: 'string' } } }, strict: false }];
  for (const model of [CLAUDE, 'gemini-3.5-flash']) {
    const r: any = await openai.responses.create({ model, input, tools, max_output_tokens: 200, ...NOW } as any);
    assert.equal(r.status, 'completed', model);
  }
  const user = last('vendor_c').messages.at(-1);
  assert.deepEqual(user.content.map((b: any) => b.type), ['tool_result', 'image']);
  assert.equal(user.content[0].content, 'the screen:');
  assert.equal(user.content[1].source.data, PNG);
});

test('parallel tool calls off, across formats: vendor A gets parallel_tool_calls false, Anthropic disable_parallel_tool_use', async () => {
  const mtools = [{ name: 'read', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];
  await anthropic.messages.create({
    model: GPT, max_tokens: 50, messages: [{ role: 'user', content: 'x' }], tools: mtools, tool_choice: { type: 'auto', disable_parallel_tool_use: true }, ...NOW,
  } as any);
  assert.equal(last('vendor_a').parallel_tool_calls, false);
  await openai.responses.create({ model: CLAUDE, input: 'x', tools: [SHELL], tool_choice: 'required', parallel_tool_calls: false, ...NOW } as any);
  assert.deepEqual(last('vendor_c').tool_choice, { type: 'any', disable_parallel_tool_use: true });
  const ctools = [{ type: 'function' as const, function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
  await openai.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'x' }], tools: ctools, parallel_tool_calls: false, ...NOW } as any);
  assert.deepEqual(last('vendor_c').tool_choice, { type: 'auto', disable_parallel_tool_use: true });
  // Gemini has no such switch: the request is served, the switch dropped.
  const g: any = await openai.chat.completions.create({ model: 'gemini-3.5-flash', messages: [{ role: 'user', content: 'x' }], tools: ctools, parallel_tool_calls: false, ...NOW } as any);
  assert.equal(g.object, 'chat.completion');
  assert.ok(!/parallel/.test(JSON.stringify(last('vendor_b'))));
});

test('an in-stream error from Gemini or GPT reaches a translated caller as provider_error too, the provider\'s code in the message', async () => {
  const input = `x ${sim({ output_tokens: 30, error_after_tokens: 3 })}`;
  for (const model of ['gemini-3.5-flash', GPT]) {
    await assert.rejects(async () => {
      for await (const _ of (await openai.chat.completions.create({ model, messages: [{ role: 'user', content: input }], stream: true, ...NOW } as any)) as any) { /* read */ }
    }, (err: any) => {
      assert.equal(err.code ?? err.error?.code, 'provider_error', `${model}: ${String(err)}`);
      return true;
    });
  }
  await assert.rejects(async () => {
    for await (const _ of (await openai.responses.create({ model: 'gemini-3.5-flash', input, stream: true, ...NOW } as any)) as any) { /* read */ }
  }, (err: any) => {
    assert.equal(err.code ?? err.error?.code, 'provider_error', String(err));
    return true;
  });
});

test('an in-stream error from Claude reaches Responses and Chat callers as provider_error, the provider\'s words kept', async () => {
  const input = `x ${sim({ output_tokens: 30, error_after_tokens: 3 })}`;
  await assert.rejects(async () => {
    for await (const _ of (await openai.responses.create({ model: CLAUDE, input, stream: true, ...NOW } as any)) as any) { /* read to the error */ }
  }, (err: any) => {
    assert.equal(err.code ?? err.error?.code, 'provider_error', String(err));
    assert.match(err.message, /api_error/);
    return true;
  });
  await assert.rejects(async () => {
    for await (const _ of (await openai.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: input }], stream: true, ...NOW } as any)) as any) { /* read */ }
  }, (err: any) => {
    assert.equal(err.code ?? err.error?.code, 'provider_error', String(err));
    assert.match(err.message, /api_error/);
    return true;
  });
});

// Codex on Gemini: Gemini's thought signatures ride encrypted_content, tagged, for a caller that
// asked for encrypted reasoning, and turn 2 of the tool loop gives Gemini its own back.
const GEMINI = 'gemini-3.1-pro-preview';
const SKIP = 'skip_thought_signature_validator';
/** cloud_a's bodies, recorded from the first test that needs them (after the gateway started). */
let cloudARecorded: UpstreamBodies | undefined;
const lastCloudA = (): any => (cloudARecorded ??= recordUpstreamBodies(t, ['cloud_a'])).last('cloud_a');
const geminiSig = (item: any): string => {
  assert.ok(item?.encrypted_content?.startsWith(GEMINI_SIGNATURE_TAG), JSON.stringify(item));
  return item.encrypted_content.slice(GEMINI_SIGNATURE_TAG.length);
};

for (const route of ['vendor_b', 'cloud_a'] as const) {
  for (const streamed of [true, false]) {
    test(`Codex on Gemini over ${route} (${streamed ? 'streamed' : 'not streamed'}): the thought signature rides encrypted_content and turn 2 sends Gemini its own, not the skip value`, async () => {
      const ask = `List files ${sim({ tool_call: 'shell', tool_args: { cmd: 'ls' }, reasoning_tokens: 20 })}`;
      const base = {
        model: GEMINI, reasoning: { effort: 'high', summary: 'detailed' }, store: false, include: ['reasoning.encrypted_content'],
        tools: [SHELL], provider: [route], ...NOW,
      } as any;
      lastCloudA();
      const ask1 = { ...base, input: [{ role: 'user', content: ask }] };
      const r1: any = streamed ? await openai.responses.stream(ask1).finalResponse() : await openai.responses.create(ask1);
      const call = r1.output.find((o: any) => o.type === 'function_call');
      const ask2 = { ...base, input: [{ role: 'user', content: ask }, ...r1.output, { type: 'function_call_output', call_id: call.call_id, output: 'a.txt' }] };
      const r2: any = streamed ? await openai.responses.stream(ask2).finalResponse() : await openai.responses.create(ask2);
      assert.equal(r2.status, 'completed');
      const sent = route === 'cloud_a' ? lastCloudA() : last('vendor_b');
      assert.ok(!JSON.stringify(sent).includes(SKIP), JSON.stringify(sent.input ?? sent.contents));
      if (route === 'vendor_b') {
        // Interactions: the thought step comes back with its signature, before the call (§5).
        assert.deepEqual(r1.output.map((o: any) => o.type), ['reasoning', 'function_call']);
        const steps = sent.input.slice(1, 3);
        assert.deepEqual(steps.map((s: any) => s.type), ['thought', 'function_call']);
        assert.equal(steps[0].signature, geminiSig(r1.output[0]));
        assert.equal(steps[0].summary[0].text, r1.output[0].summary[0].text);
      } else {
        // Vertex: the thought keeps its signature, and the call gets back the one Gemini put on it.
        assert.deepEqual(r1.output.map((o: any) => o.type), ['reasoning', 'reasoning', 'function_call']);
        const parts = sent.contents[1].parts;
        assert.equal(sent.contents[1].role, 'model');
        assert.deepEqual(parts.map((p: any) => (p.functionCall ? 'call' : p.thought ? 'thought' : 'text')), ['thought', 'call']);
        assert.equal(parts[0].thoughtSignature, geminiSig(r1.output[0]));
        assert.equal(parts[1].thoughtSignature, geminiSig(r1.output[1]));
        assert.equal(Buffer.from(parts[1].thoughtSignature, 'base64').toString().startsWith('sim-call-'), true, 'the simulator\'s call signature');
      }
    });
  }
}

test('Codex on Gemini: a caller that did not ask encrypted reasoning gets no signature (and turn 2 still goes, with the skip value)', async () => {
  const ask = `List files ${sim({ tool_call: 'shell', tool_args: { cmd: 'ls' }, reasoning_tokens: 20 })}`;
  const base = { model: GEMINI, reasoning: { effort: 'high' }, tools: [SHELL], provider: ['cloud_a'], ...NOW } as any;
  lastCloudA();
  const r1: any = await openai.responses.stream({ ...base, input: ask }).finalResponse();
  assert.deepEqual(r1.output.map((o: any) => [o.type, o.encrypted_content]), [['reasoning', undefined], ['function_call', undefined]]);
  const call = r1.output[1];
  const r2: any = await openai.responses.create({ ...base, input: [{ role: 'user', content: ask }, ...r1.output, { type: 'function_call_output', call_id: call.call_id, output: 'a.txt' }] });
  assert.equal(r2.status, 'completed');
  assert.equal(lastCloudA().contents[1].parts.find((p: any) => p.functionCall).thoughtSignature, SKIP);
});

test('Codex moved from Gemini to Claude mid loop: the gemini-signature encrypted_content never reaches Anthropic', async () => {
  const ask = `List files ${sim({ tool_call: 'shell', tool_args: { cmd: 'ls' }, reasoning_tokens: 20 })}`;
  const base = { reasoning: { effort: 'medium' }, store: false, include: ['reasoning.encrypted_content'], tools: [SHELL], ...NOW } as any;
  const r1: any = await openai.responses.create({ ...base, model: GEMINI, provider: ['cloud_a'], input: ask });
  const sigs = r1.output.filter((o: any) => o.type === 'reasoning').map(geminiSig);
  assert.equal(sigs.length, 2);
  const call = r1.output.find((o: any) => o.type === 'function_call');
  const input = [{ role: 'user', content: ask }, ...r1.output, { type: 'function_call_output', call_id: call.call_id, output: 'a.txt' }];
  const r2: any = await openai.responses.create({ ...base, model: CLAUDE, max_output_tokens: 20000, input });
  assert.equal(r2.status, 'completed');
  const body = JSON.stringify(last('vendor_c'));
  for (const s of [GEMINI_SIGNATURE_TAG, ...sigs]) assert.ok(!body.includes(s), body);
  assert.deepEqual(last('vendor_c').messages[1].content.map((b: any) => b.type), ['tool_use']);
});
