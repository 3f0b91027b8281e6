// Anthropic betas by what they turn on (lib/formats/messages/betas.ts): understood values reach
// vendor C in the anthropic-beta header and cloud B in Bedrock's anthropic_beta body field (only
// those Bedrock accepts); other routes never see them; any other value is refused by name.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { vendorC } from '../../lib/providers/anthropic.ts';
import { cloudB } from '../../lib/providers/bedrock.ts';
import { MESSAGES_BETAS, parseBetas } from '../../lib/formats/messages/betas.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const CLAUDE_CODE = 'claude-code-20250219,interleaved-thinking-2025-05-14,effort-2025-11-24';

test('parseBetas: comma lists (repeated headers too), duplicates once; an unknown value refused by name', () => {
  assert.deepEqual(parseBetas(undefined), []);
  assert.deepEqual(parseBetas([CLAUDE_CODE, ' structured-outputs-2025-11-13 ,claude-code-20250219']),
    ['claude-code-20250219', 'interleaved-thinking-2025-05-14', 'effort-2025-11-24', 'structured-outputs-2025-11-13']);
  assert.throws(() => parseBetas('claude-code-20250219, context-management-2025-06-27'),
    (e: any) => e.code === 'beta_not_supported' && e.param === 'anthropic-beta' && e.message.includes("'context-management-2025-06-27'"));
});

test('vendor C: the understood betas go in the anthropic-beta header; none without any', async () => {
  const a = vendorC('http://127.0.0.1:1', 4096);
  const args = { wire: 'messages' as const, body: { messages: [] }, model: 'claude-haiku-4-5', tier: 'standard' as const, stream: true, credential: 'k', translated: false };
  const withBetas = await a.build({ ...args, betas: parseBetas(CLAUDE_CODE) });
  assert.equal(withBetas.headers['anthropic-beta'], CLAUDE_CODE);
  assert.equal((await a.build(args)).headers['anthropic-beta'], undefined);
});

test("cloud B: Bedrock's anthropic_beta body field holds the values Bedrock accepts", async () => {
  const b = cloudB('http://127.0.0.1:1', 4096);
  const cred = { key: { access_key_id: 'AKID', secret_access_key: 'secret' } };
  const req = await b.build({ wire: 'messages', body: { messages: [] }, model: 'anthropic.claude-haiku-4-5-v1:0', tier: 'standard', stream: true, credential: cred, translated: false, betas: parseBetas(CLAUDE_CODE) });
  const body = JSON.parse(String(req.body));
  assert.deepEqual(body.anthropic_beta, ['interleaved-thinking-2025-05-14', 'effort-2025-11-24']);
  assert.equal(req.headers['anthropic-beta'], undefined);
  for (const v of body.anthropic_beta) assert.equal(MESSAGES_BETAS[v]!.bedrock, true);
});

let t: TestGateway;
let key: string;
before(async () => { t = await startTestGateway(); key = (await t.newOrg({ balance: 10_000_000 })).key; });
after(() => t.close());

const messages = (model: string, provider: string[], beta: string) => fetch(`${t.url}/v1/messages`, {
  method: 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-beta': beta },
  body: JSON.stringify({ model, provider, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], start_within: 'now' }),
});

test("Claude Code's betas are served on every route; an experimental one is refused naming it", async () => {
  for (const [model, route] of [['claude-haiku-4-5', 'vendor_c'], ['claude-haiku-4-5', 'cloud_b'], ['gpt-5.4', 'vendor_a'], ['gemini-3.5-flash', 'vendor_b']]) {
    const r = await messages(model!, [route!], `${CLAUDE_CODE},structured-outputs-2025-11-13`);
    assert.equal(r.status, 200, `${route}: ${await r.clone().text()}`);
    assert.equal(r.headers.get('x-service-served-provider'), route);
    await r.text();
  }
  const r = await messages('claude-haiku-4-5', ['vendor_c'], `${CLAUDE_CODE},mcp-client-2025-04-04`);
  assert.equal(r.status, 400);
  const e = (await r.json()).error;
  assert.equal(e.code, 'beta_not_supported');
  assert.match(e.message, /'mcp-client-2025-04-04'/);
});
