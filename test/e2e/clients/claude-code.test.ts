// Claude Code (the pinned @anthropic-ai/claude-code binary, unmodified) against the gateway on the
// simulator, configured only through its documented environment variables: the gateway as
// ANTHROPIC_BASE_URL (no /v1), an agent key as ANTHROPIC_AUTH_TOKEN (Bearer; its
// default_start_within "now" supplies the deadline Claude Code has no field for, and vendor C
// models cannot race), CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=1 (its switch for gateways), and
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (no telemetry, error reporting or update checks).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { BIN, describeRun, runClient, simulatorSentences, since, startClientGateway, type ClientGateway } from '../../helpers/clients.ts';
import { sim } from '../../helpers/gateway.ts';

let gw: ClientGateway;
let env: Record<string, string>;

before(async () => {
  gw = await startClientGateway();
  const { key } = await gw.newOrg({ balance: 100_000_000, defaultStartWithin: 'now' });
  env = {
    ANTHROPIC_BASE_URL: gw.url,
    ANTHROPIC_AUTH_TOKEN: key,
    ANTHROPIC_MODEL: 'claude-sonnet-4-6',
    ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-haiku-4-5',
    CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
});
after(() => gw.close());

const claude = (args: string[]) => runClient(join(BIN, 'claude'), args, { env, timeoutMs: 90_000 });

test('claude -p: plain text answer, nothing refused', { timeout: 120_000 }, async () => {
  const from = gw.answered.length;
  const r = await claude(['-p', `Say hello ${sim({ output_tokens: 12 })}`]);
  assert.equal(r.code, 0, describeRun(r, gw));
  assert.equal(simulatorSentences(r.stdout, 12).length, 1, describeRun(r, gw));
  assert.ok(since(gw, from).includes('POST /v1/messages 200'), describeRun(r, gw));
  // What Claude Code still sends in its no-experimental-betas mode is understood and served.
  assert.ok(gw.answered.slice(from).some((a) => a.beta?.includes('claude-code-20250219')), describeRun(r, gw));
  assert.deepEqual(gw.refused(), []);
});

test('claude -p --output-format stream-json: events end in a successful result', { timeout: 120_000 }, async () => {
  const r = await claude(['-p', `Say hello ${sim({ output_tokens: 12 })}`, '--output-format', 'stream-json', '--verbose']);
  assert.equal(r.code, 0, describeRun(r, gw));
  const events = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const result = events.at(-1);
  assert.equal(result.type, 'result', describeRun(r, gw));
  assert.equal(result.subtype, 'success');
  assert.equal(result.is_error, false);
  assert.equal(simulatorSentences(result.result, 12).length, 1, result.result);
  assert.ok(events.some((e) => e.type === 'assistant' && e.message.model === 'claude-sonnet-4-6'));
  assert.deepEqual(gw.refused(), []);
});

test('claude -p: one tool round trip (Bash runs, its result goes back, the answer follows)', { timeout: 120_000 }, async () => {
  const r = await claude([
    '-p', `Run it ${sim({ tool_call: 'Bash', tool_args: { command: 'echo tool-$((6*7))', description: 'echo' }, output_tokens: 12 })}`,
    '--output-format', 'stream-json', '--verbose', '--allowedTools', 'Bash(echo:*)',
  ]);
  assert.equal(r.code, 0, describeRun(r, gw));
  const events = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const toolUse = events.flatMap((e) => (e.type === 'assistant' ? e.message.content : [])).find((b: any) => b.type === 'tool_use');
  assert.equal(toolUse?.name, 'Bash', describeRun(r, gw));
  const toolResult = events.flatMap((e) => (e.type === 'user' && Array.isArray(e.message.content) ? e.message.content : [])).find((b: any) => b.type === 'tool_result');
  assert.equal(toolResult?.tool_use_id, toolUse.id);
  assert.match(JSON.stringify(toolResult.content), /tool-42/);   // the command's output, not its text
  assert.equal(toolResult.is_error ?? false, false);
  const result = events.at(-1);
  assert.equal(result.subtype, 'success');
  assert.equal(simulatorSentences(result.result, 12).length, 1, result.result);
  assert.deepEqual(gw.refused(), []);
});

test('claude -p on claude-opus-4-8: its system-role environment message and adaptive thinking are served', { timeout: 120_000 }, async () => {
  const from = gw.answered.length;
  const r = await runClient(join(BIN, 'claude'), ['-p', `Say hello ${sim({ output_tokens: 12 })}`], {
    env: { ...env, ANTHROPIC_MODEL: 'claude-opus-4-8' }, timeoutMs: 90_000,
  });
  assert.equal(r.code, 0, describeRun(r, gw));
  assert.equal(simulatorSentences(r.stdout, 12).length, 1, describeRun(r, gw));
  assert.ok(since(gw, from).includes('POST /v1/messages 200'), describeRun(r, gw));
  assert.deepEqual(gw.refused(), []);
});

test('claude -p through cloud_b (Claude on Bedrock): an agent key whose default_provider names it, nothing else configured', { timeout: 120_000 }, async () => {
  const { key } = await gw.newOrg({ balance: 100_000_000, defaultStartWithin: 'now', defaultProvider: ['cloud_b'] });
  const from = gw.logLines.length;
  const r = await runClient(join(BIN, 'claude'), ['-p', `Say hello ${sim({ output_tokens: 12 })}`], {
    env: { ...env, ANTHROPIC_AUTH_TOKEN: key }, timeoutMs: 90_000,
  });
  assert.equal(r.code, 0, describeRun(r, gw));
  assert.equal(simulatorSentences(r.stdout, 12).length, 1, describeRun(r, gw));
  const served = gw.logLines.slice(from).map((l) => JSON.parse(l)).filter((l) => l.req && l.status === 200 && l.endpoint === 'messages');
  assert.ok(served.length > 0, describeRun(r, gw));
  assert.deepEqual([...new Set(served.map((l) => l.route))], ['cloud_b'], 'every answer came from Bedrock');
  assert.deepEqual(gw.refused(), []);
});
