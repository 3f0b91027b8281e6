// Upstream calls through an egress proxy (lib/providers/egress-proxy.ts): a real forward proxy
// (node:http answering CONNECT, tunnelling with net.connect) between the gateway and the built-in
// simulator. The gateway's egress_proxy is what lib/main.ts reads from HTTP_PROXY and NO_PROXY
// (the simulator is plain http), given here in its config: process.env is not touched.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { assertNoSecrets, sim, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { DEFAULT_TIMEOUTS } from '../../lib/timeouts.ts';

const USER = 'gw-egress';
const PASSWORD = 'pr0xy-s3cret-pass';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

/** A forward proxy that asks for Basic credentials: each CONNECT is recorded (its target and
 *  Proxy-Authorization), and so is the request line of each HTTP request it carries (the
 *  simulator is plain http, so the tunnel's bytes can be read). `stall`: CONNECTs get no answer. */
interface ForwardProxy {
  port: number;
  connects: Array<{ target: string; auth?: string }>;
  carried: string[];
  stall: boolean;
  stop(): Promise<void>;
  start(): Promise<void>;
}

async function forwardProxy(): Promise<ForwardProxy> {
  const open = new Set<Socket>();
  let server: Server;
  const p: ForwardProxy = {
    port: 0, connects: [], carried: [], stall: false,
    async start() {
      server = createServer((_req, res) => { res.writeHead(405).end(); });
      server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
        open.add(client);
        client.on('close', () => open.delete(client));
        client.on('error', () => {});
        p.connects.push({ target: req.url!, auth: req.headers['proxy-authorization'] });
        if (p.stall) return;
        if (req.headers['proxy-authorization'] !== BASIC) { client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n'); return; }
        const [host, port] = [req.url!.slice(0, req.url!.lastIndexOf(':')), Number(req.url!.slice(req.url!.lastIndexOf(':') + 1))];
        const upstream = netConnect(port, host, () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length) upstream.write(head);
          client.on('data', (chunk: Buffer) => {
            const line = /^(GET|POST|PUT|DELETE) (\S+) HTTP\/1\.1\r\n/.exec(chunk.toString('latin1', 0, 200));
            if (line) p.carried.push(`${line[1]} ${line[2]}`);
          });
          client.pipe(upstream).pipe(client);
        });
        open.add(upstream);
        upstream.on('close', () => { open.delete(upstream); client.destroy(); });
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
      });
      await new Promise<void>((r) => server.listen(p.port, '127.0.0.1', r));
      p.port = (server.address() as AddressInfo).port;
    },
    stop: () => new Promise<void>((r) => { for (const s of open) s.destroy(); server.close(() => r()); }),
  };
  await p.start();
  return p;
}

let proxy: ForwardProxy;
let t: TestGateway;
let own: { key: string };
let managed: { key: string };
let simTarget: string;

before(async () => {
  proxy = await forwardProxy();
  t = await startTestGateway({
    config: {
      egress_proxy: { http: `http://${USER}:${PASSWORD}@127.0.0.1:${proxy.port}` },
      timeouts: { ...DEFAULT_TIMEOUTS, upstream_connect_ms: 1_000 },
    },
  });
  t.secrets.add(PASSWORD).add(BASIC.slice(6));
  own = await t.newOrg({ ownKeys: ['vendor_a', 'vendor_c'] });
  managed = await t.newOrg({ balance: 100_000_000 });
  simTarget = new URL(t.gw.simulator!.url).host;
});
after(async () => {
  await t.close();
  await proxy.stop();
});

test('an own-key stream goes through the proxy (one CONNECT to the provider, with the Basic credentials); the next request reuses the tunnel', async () => {
  const client = new OpenAI({ apiKey: own.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const stream = await client.chat.completions.create({
    model: 'gpt-5.4-mini', messages: [{ role: 'user', content: `hi ${sim({ output_tokens: 6 })}` }], stream: true, start_within: 'now',
  } as any);
  let text = '';
  for await (const chunk of stream as any) text += chunk.choices[0]?.delta?.content ?? '';
  assert.ok(text.length > 0, 'the answer streamed');
  assert.deepEqual(proxy.connects, [{ target: simTarget, auth: BASIC }]);
  assert.equal(proxy.carried.length, 1, 'the request went inside the tunnel');

  const again = await client.chat.completions.create({
    model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'again' }], start_within: 'now',
  } as any);
  assert.ok(again.choices[0]!.message.content);
  assert.equal(proxy.connects.length, 1, 'kept alive: no second CONNECT');
  assert.equal(proxy.carried.length, 2);
  assertNoSecrets(t.logLines, new Set([PASSWORD, BASIC.slice(6)]));
});

test('cloud_a mints its access token through the proxy too, then calls Vertex through it', async () => {
  const client = new OpenAI({ apiKey: managed.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  const before = proxy.carried.length;
  const { response } = await client.chat.completions.create({
    model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], start_within: 'now', provider: ['cloud_a'],
  } as any).withResponse();
  assert.equal(response.headers.get('x-service-served-provider'), 'cloud_a');
  const carried = proxy.carried.slice(before);
  assert.ok(carried.includes('POST /token'), `the token request went through the proxy: ${carried.join(', ')}`);
  assert.ok(carried.some((line) => line.includes(':generateContent')), carried.join(', '));
  assert.ok(proxy.connects.every((c) => c.target === simTarget && c.auth === BASIC));
});

test('count_tokens with an own vendor C key is counted by vendor C through the proxy', async () => {
  const client = new Anthropic({ authToken: own.key, apiKey: null, baseURL: t.url, maxRetries: 0 });
  const before = proxy.carried.length;
  const counted: any = await client.messages.countTokens({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hello there' }] });
  assert.equal(counted.counted_by, 'vendor_c');
  assert.deepEqual(proxy.carried.slice(before).map((line) => line.split('?')[0]), ['POST /v1/messages/count_tokens']);
});

test('the proxy down: 502 provider_error naming the proxy (not its password); healthy, and served again once it is back', async () => {
  await proxy.stop();
  const ask = () => fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${own.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }], start_within: 'now' }),
  });
  const down = await ask();
  const body = await down.json() as { error: { code: string; message: string } };
  assert.equal(down.status, 502);
  assert.equal(body.error.code, 'provider_error');
  assert.match(body.error.message, new RegExp(`egress proxy http://127\\.0\\.0\\.1:${proxy.port}: .*ECONNREFUSED`));
  assert.ok(!body.error.message.includes(PASSWORD) && !body.error.message.includes(USER), body.error.message);
  // A service account with no token yet: its token request fails at the proxy, which the log names.
  const org = await t.newOrg();
  const put = await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/provider-keys/cloud_a`, {
    key: {
      type: 'service_account', client_email: 'egress@sim-project.iam.gserviceaccount.com', project_id: 'sim-project', token_uri: `${t.gw.simulator!.url}/token`,
      private_key: generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    },
  });
  assert.equal(put.status, 200, JSON.stringify(put.json));
  const minted = await fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], start_within: 'now', provider: ['cloud_a'] }),
  });
  assert.equal(minted.status, 502, await minted.clone().text());
  const why = t.logLines.find((line) => line.includes('cloud_a access token not minted'));
  assert.match(why ?? '', new RegExp(`egress proxy http://127\\.0\\.0\\.1:${proxy.port}: .*ECONNREFUSED`));
  assert.equal((await fetch(`${t.url}/healthz`)).status, 200);

  await proxy.start();
  const back = await ask();
  assert.equal(back.status, 200, await back.clone().text());
  assertNoSecrets(t.logLines, new Set([PASSWORD, BASIC.slice(6)]));
});

test('a proxy that never answers the CONNECT: the attempt fails within upstream_connect_ms, counted as an upstream_connect timeout', async () => {
  proxy.stall = true;
  // The open tunnel would be reused: the pool's connections close with the proxy.
  await proxy.stop();
  await proxy.start();
  try {
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${own.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }], start_within: 'now' }),
    });
    const body = await res.json() as { error: { code: string; message: string } };
    assert.equal(res.status, 502);
    assert.equal(body.error.code, 'provider_error');
    assert.match(body.error.message, /egress proxy http:\/\/127\.0\.0\.1:\d+: no tunnel within 1000 ms/);
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    assert.match(metrics, /gateway_timeouts_total\{edge="upstream_connect"\} [1-9]/);
  } finally {
    proxy.stall = false;
  }
});

test('NO_PROXY naming the provider\'s host: calls and token requests go direct (no CONNECT)', async () => {
  const direct = await forwardProxy();
  const g = await startTestGateway({
    config: { egress_proxy: { http: `http://${USER}:${PASSWORD}@127.0.0.1:${direct.port}`, no_proxy: 'example.com, 127.0.0.1' } },
  });
  try {
    const org = await g.newOrg({ ownKeys: ['vendor_a'], balance: 100_000_000 });
    const client = new OpenAI({ apiKey: org.key, baseURL: `${g.url}/v1`, maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }], start_within: 'now',
    } as any);
    assert.ok(answer.choices[0]!.message.content);
    const { response } = await client.chat.completions.create({
      model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], start_within: 'now', provider: ['cloud_a'],
    } as any).withResponse();
    assert.equal(response.headers.get('x-service-served-provider'), 'cloud_a');
    assert.deepEqual(direct.connects, []);
  } finally {
    await g.close();
    await direct.stop();
  }
});

test('npm start reads http_proxy and NO_PROXY from its environment: the start line names the proxy (no password), calls go through it', async () => {
  const proxied = await forwardProxy();
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-egress-'));
  // The test process's own proxy variables, whatever they are, are not the child's.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/_proxy$/i.test(name)));
  const child = spawn(process.execPath, ['--import', 'tsx', 'lib/main.ts'], {
    cwd: join(import.meta.dirname, '../..'), stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...env, PORT: '0', GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_TOKEN: 'egress-admin', LOG_LEVEL: 'info',
      http_proxy: `http://${USER}:${PASSWORD}@127.0.0.1:${proxied.port}`, NO_PROXY: 'example.com',
    },
  });
  const lines: string[] = [];
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the gateway exited (${code}): ${lines.join('')}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        lines.push(line);
        const listening = JSON.parse(line) as { msg: string; url?: string };
        if (listening.msg === 'gateway listening') resolve(listening.url!);
      });
    });
    assert.ok(lines.some((line) => line.includes(`upstream calls go through proxy http://127.0.0.1:${proxied.port} (http) (NO_PROXY: example.com)`)), lines.join('\n'));
    const admin = async (path: string, body: unknown) => (await fetch(url + path, {
      method: 'POST', headers: { authorization: 'Bearer egress-admin', 'content-type': 'application/json' }, body: JSON.stringify(body),
    })).json() as Promise<any>;
    const org = await admin('/admin/v1/orgs', { name: 'egress' });
    await admin(`/admin/v1/orgs/${org.id}/topups`, { cash_micro_usd: 10_000_000 });
    const { key } = await admin(`/admin/v1/orgs/${org.id}/keys`, {});
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }], start_within: 'now' }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(proxied.connects.length, 1);
    assert.equal(proxied.connects[0]!.auth, BASIC);
  } finally {
    if (child.exitCode === null) { child.kill('SIGTERM'); await new Promise((r) => child.once('exit', r)); }
    await proxied.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  assertNoSecrets(lines, new Set([PASSWORD, BASIC.slice(6)]));
});
