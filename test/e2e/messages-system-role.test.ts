// A Messages caller's system-role message (the SDK's SystemMessageParam), in the shape the pinned
// Claude Code sends on Opus 4.8: the user's turn, then its environment as a `role: "system"`
// message, with adaptive thinking, output_config.effort and max_tokens 64000. Passed through to
// vendor_c as sent; translated to vendor_a and cloud_a with the environment in their system text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { recordUpstreamBodies, type UpstreamBodies } from '../helpers/upstream-bodies.ts';

let t: TestGateway;
let anthropic: Anthropic;
let upstream: UpstreamBodies;

before(async () => {
  t = await startTestGateway();
  upstream = recordUpstreamBodies(t, ['vendor_a', 'cloud_a', 'vendor_c']);
  const { key } = await t.newOrg({ balance: 100_000_000, defaultStartWithin: 'now' });
  anthropic = new Anthropic({ authToken: key, apiKey: null, baseURL: t.url, maxRetries: 0 });
});
after(() => t.close());

const ENVIRONMENT = '# Environment\nYou have been invoked in the following environment: \n - Platform: linux\n - Shell: bash';
const TOOL: Anthropic.Tool = { name: 'Bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } };

/** Claude Code's first request, cut down: its fields and message roles as 2.1.330 sends them. */
const claudeCodeBody = (text: string): Anthropic.MessageCreateParamsNonStreaming => ({
  model: 'claude-opus-4-8',
  max_tokens: 64000,
  system: [{ type: 'text', text: "You are a Claude agent, built on Anthropic's Claude Agent SDK.", cache_control: { type: 'ephemeral' } }],
  messages: [
    { role: 'user', content: [{ type: 'text', text: '<system-reminder>\nAttribution…\n</system-reminder>\n' }, { type: 'text', text, cache_control: { type: 'ephemeral' } }] },
    { role: 'system', content: ENVIRONMENT },
  ],
  tools: [TOOL],
  metadata: { user_id: '{"session_id":"s1"}' },
  thinking: { type: 'adaptive' },
  output_config: { effort: 'high' },
});

test('vendor_c: the system-role message passes through as sent, streamed and not', async () => {
  const body = claudeCodeBody(`Say hello ${sim({ output_tokens: 12 })}`);
  const final = await anthropic.messages.stream(body).finalMessage();   // as Claude Code asks
  assert.equal(final.stop_reason, 'end_turn');
  assert.ok(final.content.some((block) => block.type === 'text'));
  assert.deepEqual(upstream.last('vendor_c').messages, body.messages);

  // The SDK streams only above its long-request threshold: a smaller max_tokens answers whole.
  const message = await anthropic.messages.create({ ...body, max_tokens: 4096 });
  assert.equal(message.stop_reason, 'end_turn');
  assert.deepEqual(upstream.last('vendor_c').messages.map((m: { role: string }) => m.role), ['user', 'system']);
});

for (const { route, model, system } of [
  { route: 'vendor_a', model: 'gpt-5.4-mini', system: (b: any) => b.instructions },
  { route: 'cloud_a', model: 'gemini-3.5-flash', system: (b: any) => b.systemInstruction?.parts?.[0]?.text },
] as const) {
  test(`${route}: translated, the system-role message joins the system text after the top-level system`, async () => {
    // Without what only vendor C takes (cache_control, output_config.effort), refused before here.
    const body = claudeCodeBody(`Say hello ${sim({ output_tokens: 12 })}`);
    const { output_config: _effort, ...rest } = body;
    const translated = {
      ...rest, model, max_tokens: 4096, provider: [route],
      system: 'You are a Claude agent.',
      messages: [{ role: 'user', content: `Say hello ${sim({ output_tokens: 12 })}` }, { role: 'system', content: [{ type: 'text', text: ENVIRONMENT }] }],
    } as Anthropic.MessageCreateParamsNonStreaming;
    const message = await anthropic.messages.create(translated);
    assert.equal(message.stop_reason, 'end_turn');
    const sent = upstream.last(route);
    assert.equal(system(sent), `You are a Claude agent.\n\n${ENVIRONMENT}`);
    assert.doesNotMatch(JSON.stringify(route === 'vendor_a' ? sent.input : sent.contents), /# Environment/);
  });
}
