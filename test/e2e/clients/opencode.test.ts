// opencode (the pinned opencode-ai binary, unmodified) against the gateway on the simulator,
// configured only through its documented config file (~/.config/opencode/opencode.json: a
// provider with its AI SDK package, base URL, key from the environment, the models it lists) and
// its documented environment switches: OPENCODE_DISABLE_MODELS_FETCH (no models.dev lookup: the
// optional internet request that must not fail a run without internet), OPENCODE_DISABLE_AUTOUPDATE,
// OPENCODE_DISABLE_DEFAULT_PLUGINS (no plugin install from the registry), OPENCODE_DISABLE_LSP_DOWNLOAD.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { BIN, describeRun, runClient, simulatorSentences, since, startClientGateway, type ClientGateway } from '../../helpers/clients.ts';
import { sim } from '../../helpers/gateway.ts';

let gw: ClientGateway;
let raceKey: string;
let nowKey: string;

before(async () => {
  gw = await startClientGateway();
  ({ key: raceKey } = await gw.newOrg({ balance: 100_000_000, defaultStartWithin: '00h-00m-30s' }));
  ({ key: nowKey } = await gw.newOrg({ balance: 100_000_000, defaultStartWithin: 'now' }));
});
after(() => gw.close());

interface Provider { npm: string; baseURL: string; auth: 'apiKey' | 'authToken'; model: string; key: string }

function opencode(p: Provider, prompt: string) {
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    provider: {
      gateway: {
        npm: p.npm, name: 'Deadline gateway',
        options: { baseURL: p.baseURL, [p.auth]: '{env:GATEWAY_API_KEY}' },
        models: { [p.model]: { name: p.model } },
      },
    },
    model: `gateway/${p.model}`,
  };
  return runClient(join(BIN, 'opencode'), ['run', prompt], {
    files: { '.config/opencode/opencode.json': JSON.stringify(config, null, 2) },
    env: {
      GATEWAY_API_KEY: p.key,
      OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_DEFAULT_PLUGINS: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    },
    timeoutMs: 90_000,
  });
}

test('opencode run through an OpenAI-compatible provider (Chat Completions, /v1 base URL)', { timeout: 120_000 }, async () => {
  const from = gw.answered.length;
  const r = await opencode({ npm: '@ai-sdk/openai-compatible', baseURL: `${gw.url}/v1`, auth: 'apiKey', model: 'gpt-5.4', key: raceKey }, `Say hello ${sim({ output_tokens: 12 })}`);
  assert.equal(r.code, 0, describeRun(r, gw));
  assert.ok(simulatorSentences(r.stdout, 12).length >= 1, describeRun(r, gw));
  assert.ok(since(gw, from).includes('POST /v1/chat/completions 200'), describeRun(r, gw));
  assert.deepEqual(gw.refused(), []);
});

// One run through @ai-sdk/anthropic covers the Messages path, Bearer authToken, the structured-outputs
// beta the SDK sends whenever tools are present (opencode always sends tools) and a tool round trip.
test('opencode run through @ai-sdk/anthropic: bash runs, its output goes back, the answer follows', { timeout: 120_000 }, async () => {
  const from = gw.answered.length;
  const r = await opencode({ npm: '@ai-sdk/anthropic', baseURL: `${gw.url}/v1`, auth: 'authToken', model: 'claude-sonnet-4-6', key: nowKey },
    `Run it ${sim({ tool_call: 'bash', tool_args: { command: 'echo tool-$((6*7))', description: 'echo' }, output_tokens: 12 })}`);
  assert.equal(r.code, 0, describeRun(r, gw));
  assert.match(r.stderr + r.stdout, /tool-42/, describeRun(r, gw));   // the command's output (opencode shows it on stderr), not its text
  assert.ok(simulatorSentences(r.stdout, 12).length >= 1, describeRun(r, gw));
  assert.ok(since(gw, from).filter((l) => l === 'POST /v1/messages 200').length >= 2, describeRun(r, gw));
  assert.ok(gw.answered.slice(from).some((a) => a.beta?.includes('structured-outputs-2025-11-13')), 'the AI SDK sent its structured-outputs beta, and it was served');
  assert.deepEqual(gw.refused(), []);
});
