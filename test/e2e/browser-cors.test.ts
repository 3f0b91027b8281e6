// The official SDKs in a real browser on another origin (cors.allowed_origins): headless Chromium
// (Debian's package, driven by playwright-core) opens a page served by a second server on another
// port, which runs the `openai` and `@anthropic-ai/sdk` packages bundled for the browser
// (dangerouslyAllowBrowser) against the gateway on the simulator: a streamed Responses call, a Chat
// Completions call and a Messages call read their text and the gateway's headers (x-request-id,
// x-service-*) off the raw response. A page on an origin not listed fails at the preflight with the
// browser's CORS error, and the gateway counts no request for it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { startTestGateway, sim, type TestGateway } from '../helpers/gateway.ts';
import { launchChromium } from '../helpers/browser.ts';

/** The two SDKs as one browser script, setting window.OpenAI and window.Anthropic. */
async function bundleSdks(): Promise<string> {
  const result = await build({
    stdin: {
      contents: "import OpenAI from 'openai'; import Anthropic from '@anthropic-ai/sdk'; Object.assign(globalThis, { OpenAI, Anthropic });",
      resolveDir: new URL('../..', import.meta.url).pathname, loader: 'js',
    },
    bundle: true, platform: 'browser', format: 'iife', write: false, logLevel: 'warning',
  });
  return result.outputFiles[0]!.text;
}

/** A page origin: an empty page that loads the bundle. */
async function pageServer(sdk: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/sdk.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(sdk);
    else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title><script src="/sdk.js"></script>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let t: TestGateway;
let browser: Browser;
let key: string;
let app: { server: Server; origin: string };
let stranger: { server: Server; origin: string };
const pages: Page[] = [];
const consoleErrors: string[] = [];

before(async () => {
  const sdk = await bundleSdks();
  app = await pageServer(sdk);
  stranger = await pageServer(sdk);
  t = await startTestGateway({ config: { cors: { allowed_origins: [app.origin] } } });
  key = (await t.newOrg({ balance: 10_000_000 })).key;
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await t?.close();
  for (const s of [app, stranger]) if (s) await new Promise((r) => s.server.close(r));
});

async function open(origin: string): Promise<Page> {
  const page = await browser.newPage();
  pages.push(page);
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => typeof (globalThis as any).OpenAI === 'function');
  return page;
}

const requestsCounted = async (): Promise<number> => {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  return [...text.matchAll(/^gateway_requests_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
};

test('the openai SDK in a page on an allowed origin: a streamed Responses call and a Chat Completions call, their headers readable', async () => {
  const page = await open(app.origin);
  const out = await page.evaluate(async ({ gateway, key, input }) => {
    const client = new (globalThis as any).OpenAI({ apiKey: key, baseURL: `${gateway}/v1`, dangerouslyAllowBrowser: true, maxRetries: 0 });
    const { data: stream, response } = await client.responses
      .create({ model: 'gpt-5.4-mini', input, start_within: 'now', stream: true }).withResponse();
    let streamed = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') streamed += event.delta;
    const chat = await client.chat.completions
      .create({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: input }], start_within: 'now' }).withResponse();
    return {
      streamed, streamId: response.headers.get('x-request-id'), provider: response.headers.get('x-service-served-provider'),
      chatText: chat.data.choices[0].message.content, chatId: chat.response.headers.get('x-request-id'),
      chatCost: chat.response.headers.get('x-service-cost'), chatReason: chat.response.headers.get('x-service-flex-reason'),
    };
  }, { gateway: t.url, key, input: `hello ${sim({ output_tokens: 12 })}` });
  assert.ok(out.streamed.length > 0, 'the streamed text arrived');
  assert.match(out.streamId ?? '', /^[0-9a-f-]{36}$/, 'x-request-id is readable from the page');
  assert.equal(out.provider, 'vendor_a');
  assert.ok(out.chatText && out.chatText.length > 0, 'the chat text arrived');
  assert.match(out.chatId ?? '', /^[0-9a-f-]{36}$/);
  assert.notEqual(out.chatId, out.streamId);
  assert.match(out.chatCost ?? '', /^\d+$/, 'x-service-cost is readable');
  assert.equal(out.chatReason, 'standard_requested');
});

test('the Anthropic SDK in the same page: a Messages call, its request id read as the SDK reads it', async () => {
  const page = await open(app.origin);
  const out = await page.evaluate(async ({ gateway, key, content }) => {
    const client = new (globalThis as any).Anthropic({ apiKey: null, authToken: key, baseURL: gateway, dangerouslyAllowBrowser: true, maxRetries: 0 });
    const { data, response } = await client.messages
      .create({ model: 'claude-haiku-4-5', max_tokens: 50, start_within: 'now', messages: [{ role: 'user', content }] }).withResponse();
    return { text: data.content[0]?.text, requestId: data._request_id, header: response.headers.get('x-request-id') };
  }, { gateway: t.url, key, content: `hi ${sim({ output_tokens: 6 })}` });
  assert.ok(out.text && out.text.length > 0, 'the Messages text arrived');
  assert.match(out.requestId ?? '', /^[0-9a-f-]{36}$/, 'request-id is readable (the SDK\'s _request_id)');
  assert.equal(out.requestId, out.header);
});

test('a page on an origin not listed: the browser blocks the call at its preflight, and the gateway counts no request', async () => {
  const counted = await requestsCounted();
  const page = await open(stranger.origin);
  const failure = await page.evaluate(async ({ gateway, key, input }) => {
    const client = new (globalThis as any).OpenAI({ apiKey: key, baseURL: `${gateway}/v1`, dangerouslyAllowBrowser: true, maxRetries: 0 });
    try {
      await client.responses.create({ model: 'gpt-5.4-mini', input, start_within: 'now' });
      return 'served';
    } catch (err: any) { return `${err.constructor.name}: ${err.message} (${err.cause})`; }
  }, { gateway: t.url, key, input: `hello ${sim({ output_tokens: 3 })}` });
  assert.match(failure, /^APIConnectionError: Connection error\. \(TypeError: Failed to fetch\)/);
  const blocked = consoleErrors.find((line) => line.includes(stranger.origin) && /blocked by CORS policy/.test(line));
  assert.ok(blocked, `the browser names the CORS refusal: ${consoleErrors.join(' | ')}`);
  assert.match(blocked!, /preflight/);
  assert.ok(!consoleErrors.some((line) => line.includes(app.origin) && /CORS/.test(line)), 'the allowed origin never hit one');
  assert.equal(await requestsCounted(), counted, 'the request itself was never sent');
});
