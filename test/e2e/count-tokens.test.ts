// POST /v1/messages/count_tokens through the official Anthropic SDK (messages.countTokens): counted
// by vendor C for an organization with its own vendor C key and a vendor C model, by the gateway's
// admission estimate otherwise; `counted_by` says which. Auth, errors and betas as on /v1/messages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { IMAGE_MAX_TOKENS, PDF_PAGE_TOKENS, imageSize } from '../../lib/routing/input-estimate.ts';

let t: TestGateway;
let own: Anthropic;
let managed: Anthropic;
let managedKey: string;

before(async () => {
  t = await startTestGateway();
  own = new Anthropic({ authToken: (await t.newOrg({ ownKeys: ['vendor_c'] })).key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  managedKey = (await t.newOrg({ balance: 1_000_000 })).key;
  managed = new Anthropic({ authToken: managedKey, apiKey: null, baseURL: t.url, maxRetries: 0 });
});
after(() => t.close());

const body = { messages: [{ role: 'user' as const, content: 'Count the tokens of this sentence, please.' }], system: 'Be brief.' };

test('vendor C model, own vendor C key: counted by vendor C (the simulator counts ⌈text / 4⌉)', async () => {
  const r: any = await own.messages.countTokens({ model: 'claude-haiku-4-5', ...body });
  assert.equal(r.counted_by, 'vendor_c');
  assert.equal(r.input_tokens, Math.ceil(('Be brief.' + body.messages[0]!.content).length / 4));
});

test('no own vendor C key, or another family: the gateway estimate (⌈body bytes / 4⌉), nothing charged', async () => {
  for (const [client, model] of [[managed, 'claude-haiku-4-5'], [own, 'gpt-5.4'], [managed, 'gemini-3.5-flash']] as const) {
    const r: any = await client.messages.countTokens({ model, ...body });
    assert.equal(r.counted_by, 'gateway_estimate', model);
    assert.equal(r.input_tokens, Math.ceil(JSON.stringify({ model, ...body }).length / 4));
  }
  const limits = await (await fetch(`${t.url}/v1/limits`, { headers: { authorization: `Bearer ${managedKey}` } })).json();
  assert.equal(limits.managed.balance.remaining_micro_usd, 1_000_000);
});

test('the spec\'s auth and errors apply, in the Messages envelope', async () => {
  const post = (headers: Record<string, string>, b: unknown) => fetch(`${t.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(b) });
  const r1 = await post({ 'x-api-key': managedKey }, { model: 'claude-haiku-4-5', ...body });
  assert.equal(r1.status, 401);
  assert.equal((await r1.json()).error.code, 'missing_api_key');
  await assert.rejects(managed.messages.countTokens({ model: 'no-such-model', ...body }), (e: any) => e.status === 404 && e.error.error.code === 'model_not_found');
  await assert.rejects(managed.messages.countTokens({ model: 'claude-haiku-4-5', ...body, max_tokens: 5 } as any), (e: any) => e.status === 400 && e.error.error.code === 'unsupported_parameter');
  await assert.rejects(managed.messages.countTokens({ model: 'claude-haiku-4-5', ...body }, { headers: { 'anthropic-beta': 'context-management-2025-06-27' } }),
    (e: any) => e.status === 400 && e.error.error.code === 'beta_not_supported' && /context-management-2025-06-27/.test(e.message));
});

test('vendor C unreachable on the own-key path: 502 provider_error, as /v1/messages answers, not a 500', async () => {
  // A port nothing listens on: taken, then given back.
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = server.address() as { port: number };
      server.close(() => resolve(p));
    });
  });
  const dir = mkdtempSync(join(tmpdir(), 'gw-count-'));
  const file = join(dir, 'gateway.json');
  writeFileSync(file, JSON.stringify({ routes: { vendor_c: { base_url: `http://127.0.0.1:${port}` } }, managed: {} }));
  const dead = await startTestGateway({ file });
  try {
    const client = new Anthropic({ authToken: (await dead.newOrg({ ownKeys: ['vendor_c'] })).key, apiKey: null, baseURL: dead.url, maxRetries: 0 });
    await assert.rejects(client.messages.countTokens({ model: 'claude-haiku-4-5', ...body }), (e: any) => {
      assert.equal(e.status, 502, String(e));
      assert.equal(e.error.error.code, 'provider_error');
      assert.equal(e.error.error.type, 'api_error');
      return true;
    });
    await assert.rejects(client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 5, start_within: 'now', ...body } as any),
      (e: any) => e.status === 502 && e.error.error.code === 'provider_error');
  } finally {
    await dead.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A PNG's first bytes: signature and IHDR with its width and height. */
function png(width: number, height: number, bytes: number): string {
  const b = Buffer.alloc(bytes, 7);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).copy(b);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b.toString('base64');
}

test('the estimate counts an image or a PDF by its own figure, not its base64 as text', async () => {
  const blob = Buffer.alloc(150_000, 7).toString('base64'); // no header the estimate can read: the cap
  const small = png(100, 150, 150_000); // 100 × 150 / 750 = 20
  const pdf = Buffer.from(`%PDF-1.4 1 0 obj << /Type /Pages /Kids [2 0 R 3 0 R] >> 2 0 obj << /Type /Page >> 3 0 obj << /Type /Page >> ${'x'.repeat(200_000)}`).toString('base64');
  const cases: Array<[unknown, string, number]> = [
    [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: blob } }, blob, IMAGE_MAX_TOKENS],
    [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: small } }, small, 20],
    [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }, pdf, 2 * PDF_PAGE_TOKENS],
    // an image a tool returned counts the same
    [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: blob } }] }, blob, IMAGE_MAX_TOKENS],
  ];
  for (const [block, data, figure] of cases) {
    const messages: any[] = (block as any).type === 'tool_result'
      ? [{ role: 'user', content: 'x' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'look', input: {} }] }, { role: 'user', content: [block] }]
      : [{ role: 'user', content: [block, { type: 'text', text: 'What is this?' }] }];
    const r: any = await managed.messages.countTokens({ model: 'claude-haiku-4-5', messages });
    const textBytes = JSON.stringify({ model: 'claude-haiku-4-5', messages }).length - data.length;
    assert.equal(r.counted_by, 'gateway_estimate');
    assert.equal(r.input_tokens, Math.ceil(textBytes / 4) + figure, JSON.stringify(block).slice(0, 80));
  }
});

test('both paths run the same message checks: a role other than user or assistant is refused on each', async () => {
  for (const client of [managed, own]) {
    await assert.rejects(client.messages.countTokens({ model: 'claude-haiku-4-5', messages: [{ role: 'robot', content: 'x' }] } as any),
      (e: any) => e.status === 400 && e.error.error.code === 'invalid_request' && /role/.test(e.message));
  }
});

test('image sizes are read from PNG, GIF, JPEG and WebP headers; anything else is unknown', () => {
  const gif = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.from([0x40, 0x01, 0xf0, 0x00])]);
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80, 0x03, 0, 0, 0, 0]);
  const riff = (chunk: string, bytes: number[]) => Buffer.concat([Buffer.from('RIFF\0\0\0\0WEBP' + chunk + '\0\0\0\0', 'latin1'), Buffer.from(bytes), Buffer.alloc(16)]);
  const vp8x = riff('VP8X', [0, 0, 0, 0, 0x3f, 0x01, 0x00, 0xdf, 0x01, 0x00]); // 320 × 480
  const vp8l = riff('VP8L', [0x2f, ...[(319 | (479 << 14)) & 0xff, ((319 | (479 << 14)) >> 8) & 0xff, ((319 | (479 << 14)) >> 16) & 0xff, ((319 | (479 << 14)) >> 24) & 0xff]]);
  const vp8 = riff('VP8 ', [0, 0, 0, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xe0, 0x01]);
  assert.deepEqual(imageSize(Buffer.from(png(640, 480, 64), 'base64')), [640, 480]);
  assert.deepEqual(imageSize(gif), [320, 240]);
  assert.deepEqual(imageSize(jpeg), [640, 480]);
  for (const webp of [vp8x, vp8l, vp8]) assert.deepEqual(imageSize(webp), [320, 480]);
  assert.equal(imageSize(Buffer.alloc(64, 7)), undefined);
});

test('the Anthropic SDK reads count_tokens\' request id (it looks only at request-id)', async () => {
  const { data, response } = await own.messages.countTokens({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  assert.ok(response.headers.get('request-id'));
  assert.equal(response.headers.get('request-id'), response.headers.get('x-request-id'));
  assert.equal((data as any)._request_id, response.headers.get('request-id'));
});
