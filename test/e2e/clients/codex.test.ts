// Codex (the pinned @openai/codex binary, unmodified) against the gateway on the simulator,
// configured only through its documented config.toml: a custom model provider with the gateway's
// /v1 base URL, wire_api "responses", the key from an environment variable (sent as Bearer),
// update checks and analytics off. The key is an agent key whose default_start_within (30 s)
// races flex for Codex, which has no deadline field.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { BIN, describeRun, runClient, simulatorSentences, since, startClientGateway, type ClientGateway } from '../../helpers/clients.ts';
import { sim } from '../../helpers/gateway.ts';
import { recordUpstreamBodies } from '../../helpers/upstream-bodies.ts';

let gw: ClientGateway;
let key: string;

before(async () => {
  gw = await startClientGateway();
  ({ key } = await gw.newOrg({ balance: 100_000_000, defaultStartWithin: '00h-00m-30s' }));
});
after(() => gw.close());

function configToml(): string {
  return [
    'model = "gpt-5.4"',
    'model_provider = "gateway"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.gateway]',
    'name = "Deadline gateway"',
    `base_url = "${gw.url}/v1"`,
    'env_key = "GATEWAY_API_KEY"',
    'wire_api = "responses"',
    '',
    '[analytics]',
    'enabled = false',
    '',
  ].join('\n');
}

/** `codex exec` with a fresh ~/.codex holding only our config.toml. */
function codex(prompt: string) {
  return runClient(join(BIN, 'codex'), ['exec', '--skip-git-repo-check', prompt], {
    files: { '.codex/config.toml': configToml() }, env: { GATEWAY_API_KEY: key }, timeoutMs: 90_000,
  });
}

test('codex exec: text answer over the Responses wire, nothing refused', { timeout: 120_000 }, async () => {
  const from = gw.answered.length;
  const r = await codex(`Say hello ${sim({ output_tokens: 12 })}`);
  assert.equal(r.code, 0, describeRun(r, gw));
  assert.ok(simulatorSentences(r.stdout, 12).length >= 1, describeRun(r, gw));
  assert.ok(since(gw, from).includes('POST /v1/responses 200'), describeRun(r, gw));
  assert.deepEqual(gw.refused(), []);
});

test('codex exec: one tool round trip (exec_command runs, its output goes back, the answer follows)', { timeout: 120_000 }, async () => {
  const from = gw.answered.length;
  const r = await codex(`Run it ${sim({ tool_call: 'exec_command', tool_args: { cmd: 'echo tool-$((6*7))' }, output_tokens: 12 })}`);
  assert.equal(r.code, 0, describeRun(r, gw));
  assert.match(r.stderr + r.stdout, /tool-42/, describeRun(r, gw));   // the command's output, not its text
  assert.ok(simulatorSentences(r.stdout, 12).length >= 1, describeRun(r, gw));
  assert.ok(since(gw, from).filter((l) => l === 'POST /v1/responses 200').length >= 2, describeRun(r, gw));
  assert.deepEqual(gw.refused(), []);
});

test('codex exec on Gemini 3 with reasoning: turn 2 gives Gemini its own thought signature back (encrypted_content, tagged), not the skip value', { timeout: 120_000 }, async () => {
  const up = recordUpstreamBodies(gw, ['vendor_b']);
  const toml = configToml().replace('model = "gpt-5.4"', ['model = "gemini-3.1-pro-preview"', 'model_reasoning_effort = "high"', 'model_reasoning_summary = "detailed"'].join('\n'));
  const from = gw.answered.length;
  const r = await runClient(join(BIN, 'codex'), ['exec', '--skip-git-repo-check', `Run it ${sim({ tool_call: 'exec_command', tool_args: { cmd: 'echo tool-$((6*7))' }, output_tokens: 12, reasoning_tokens: 30 })}`], {
    files: { '.codex/config.toml': toml }, env: { GATEWAY_API_KEY: key }, timeoutMs: 90_000,
  });
  assert.equal(r.code, 0, describeRun(r, gw));
  assert.match(r.stderr + r.stdout, /tool-42/, describeRun(r, gw));
  assert.ok(since(gw, from).filter((l) => l === 'POST /v1/responses 200').length >= 2, describeRun(r, gw));
  assert.deepEqual(gw.refused(), []);
  const turns = up.sent.map((s) => s.body);
  assert.equal(turns.length, 2, JSON.stringify(turns.map((b) => b.input?.map((s: any) => s.type))));
  const steps = turns[1].input.filter((s: any) => s.type === 'thought' || s.type === 'function_call');
  assert.deepEqual(steps.map((s: any) => s.type), ['thought', 'function_call'], JSON.stringify(steps));
  assert.match(steps[0].signature, /^[A-Za-z0-9+/=]{96}$/, 'the simulator\'s thought signature, untagged');
  assert.ok(!JSON.stringify(turns[1]).includes('skip_thought_signature_validator'), JSON.stringify(steps));
});
