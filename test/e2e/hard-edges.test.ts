// Hard edges, tried as a careless or hostile user would: malformed admin input and mutated inference
// bodies never give a 5xx,
// credential parse errors never echo a key, an oversize simulator directive is refused while the
// process lives, wrong admin tokens are limited per client address, and trust_proxy decides when
// X-Forwarded-For names the client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ERRORS } from '../../lib/errors.ts';
import { startTestGateway, sim, ADMIN_TOKEN } from '../helpers/gateway.ts';
import { clientIpResolver, subnet64 } from '../../lib/http/client-ip.ts';

const NO_LIMITS = { organization_requests: null, api_key_requests: null, client_ip_requests: null, failed_authentications: null, publish: false };

/** A small seeded generator (mulberry32): the fuzz is the same on every run. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('an admin fuzz of 5,000 malformed requests gives no 5xx, and every answer carries a documented code', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  try {
    const org = await t.newOrg();
    const r = rng(13);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const segments = [org.orgId, 'org_missing', '%ZZ', '%', '%E0%A4%A', '%F0%9F%98%80', '..', '%2e%2e', 'a'.repeat(300), '0', '-1', '%00', 'vendor_a', 'cloud_a', 'cloud_b', 'nope', '%C0%AF', 'key_x', '%uD800'];
    const tails = ['', '/keys', '/provider-keys/' , '/topups', '/overrides', '/review', '/exempt', '/ledger', '/exempt/extra'];
    const numbers = [1e300, -1e300, 9007199254740992, 9007199254740991, -1, 1.5, 0, 1e15, 1e15 + 1, NaN, Infinity];
    const values: unknown[] = [...numbers, null, true, 'x', '', [], {}, [1, 2], { a: { b: { c: 1 } } }, 'sk-proj-PRIVATEKEYMATERIAL', '{"type":"service_account"', '0'.repeat(500)];
    const fields = ['name', 'default_start_within', 'key', 'project', 'location', 'region', 'cash_micro_usd', 'credit_micro_usd', 'concurrency', 'daily_spend_micro_usd', 'exempt', '__proto__', 'constructor'];
    const body = (): string | undefined => {
      switch (Math.floor(r() * 6)) {
        case 0: return undefined;
        case 1: return pick(['{', '[', 'null', '1', '"x"', '{"a":', '\u0000', 'sk-proj-NOTJSON', '{"key": sk-proj-x}']);
        case 2: return JSON.stringify(pick(values));
        default: {
          const o: Record<string, unknown> = {};
          const n = 1 + Math.floor(r() * 3);
          for (let i = 0; i < n; i++) o[pick(fields)] = r() < 0.3 ? { [pick(['access_key_id', 'secret_access_key', 'client_email', 'private_key'])]: pick(values) } : pick(values);
          return JSON.stringify(o);
        }
      }
    };
    // Mostly the documented method and path shape with bad segments and bodies; some of anything.
    const shapes: Array<[string, string]> = [['POST', '/keys'], ['PUT', '/provider-keys/'], ['DELETE', '/provider-keys/'], ['POST', '/topups'], ['PUT', '/overrides'], ['POST', '/review'], ['DELETE', '/review'], ['PUT', '/exempt'], ['GET', '/ledger']];
    const one = async (): Promise<{ status: number; code: string | undefined; what: string }> => {
      let method: string;
      let path: string;
      const roll = r();
      if (roll < 0.1) { method = pick(['POST', 'GET']); path = '/admin/v1/orgs'; }
      else if (roll < 0.2) { method = pick(['DELETE', 'GET']); path = `/admin/v1/keys/${pick(segments)}`; }
      else if (roll < 0.8) {
        const [m, tail] = pick(shapes);
        method = m;
        path = `/admin/v1/orgs/${r() < 0.6 ? org.orgId : pick(segments)}${tail}${tail.endsWith('/') ? pick(segments) : ''}`;
      } else {
        method = pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']);
        path = `/admin/v1/orgs/${pick(segments)}${pick(tails)}${r() < 0.3 ? pick(segments) : ''}`;
      }
      const b = method === 'GET' ? undefined : body();
      const res = await fetch(t.url + path, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: b });
      const text = await res.text();
      let code: string | undefined;
      try { code = JSON.parse(text)?.error?.code; } catch { code = undefined; }
      return { status: res.status, code, what: `${method} ${path} ${b?.slice(0, 80)}` };
    };
    const statuses = new Map<number, number>();
    for (let batch = 0; batch < 100; batch++) {
      const out = await Promise.all(Array.from({ length: 50 }, one));
      for (const o of out) {
        statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
        assert.ok(o.status < 500, `5xx for ${o.what}`);
        if (o.status >= 400) assert.ok(o.code && o.code in ERRORS, `undocumented code ${o.code} for ${o.what}`);
      }
    }
    console.log(`# admin fuzz statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);
    assert.ok((statuses.get(400) ?? 0) > 1_000 && (statuses.get(404) ?? 0) > 500, 'the fuzz reached both validation and lookup');
  } finally {
    await t.close();
  }
});

test('an inference fuzz: 2,000 mutated bodies on every caller format and model family give no 5xx, a documented code for every refusal, a clean answer for every 200', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  try {
    // Own keys for the vendors; the cloud routes run managed, on a balance.
    const org = await t.newOrg({ ownKeys: ['vendor_a', 'vendor_b', 'vendor_c'], balance: 50_000_000 });
    const r = rng(Number(process.env.FUZZ_SEED ?? 29));   // the same fuzz on every run; FUZZ_SEED explores others
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    // A valid body per caller format, with tools, a tool call and its result, for any model: the
    // same format is passed through, another is translated.
    // A fresh schema per body: a mutation of one must not reach the next (the Messages body after
    // a fuzz that deleted `type` would be refused by the provider, as Anthropic does).
    const params = () => ({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
    const valid: Record<string, (model: string) => Record<string, unknown>> = {
      '/v1/responses': (model) => ({
        model, start_within: 'now', instructions: 'be brief', max_output_tokens: 50, stream: r() < 0.5,
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
          { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"x"}' },
          { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
        ],
        tools: [{ type: 'function', name: 'get_weather', parameters: params() }], tool_choice: 'auto',
      }),
      '/v1/chat/completions': (model) => ({
        model, start_within: 'now', max_tokens: 50, stream: r() < 0.5, stream_options: { include_usage: true },
        messages: [
          { role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'hi' }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"x"}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
        ],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: params() } }],
      }),
      '/v1/messages': (model) => ({
        model, start_within: 'now', max_tokens: 50, stream: r() < 0.5, system: [{ type: 'text', text: 'be brief' }],
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'x' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'sunny' }] },
        ],
        tools: [{ name: 'get_weather', input_schema: params() }], tool_choice: { type: 'auto' },
      }),
      '/v1/interactions': (model) => ({
        model, start_within: 'now', stream: r() < 0.5, system_instruction: 'be brief',
        input: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
        tools: [{ type: 'function', name: 'get_weather', parameters: params() }], generation_config: { max_output_tokens: 50 },
      }),
    };
    const models = ['gpt-5.4-mini', 'gemini-3.5-flash', 'claude-haiku-4-5'];
    const anyValue = (depth = 0): unknown => {
      const roll = r();
      if (roll < 0.12) return null;
      if (roll < 0.24) return pick([0, -1, 1.5, 1e308, 2 ** 53 + 1, 1e-9]);
      if (roll < 0.38) return pick(['', 'x', '\u0000', '\ud800', 'é', 'now', 'auto', 'user', 'assistant', 'text', 'function', '{"a":1}', '00h-00m-05s']);
      if (roll < 0.46) return r() < 0.5;
      if (depth > 2) return 'deep';
      if (roll < 0.7) return Array.from({ length: Math.floor(r() * 3) }, () => anyValue(depth + 1));
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(r() * 3); i > 0; i--) o[pick(['type', 'text', 'role', 'content', 'id', 'name', 'x', '__proto__'])] = anyValue(depth + 1);
      return o;
    };
    /** Every path into a JSON value, the value itself first. */
    const pathsOf = (v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] => {
      out.push(at);
      if (v && typeof v === 'object') for (const k of Object.keys(v)) pathsOf((v as any)[k], [...at, Array.isArray(v) ? Number(k) : k], out);
      return out;
    };
    /** One to three changes anywhere in the body: a member or element replaced, or a member removed. */
    const mutate = (body: Record<string, unknown>): Record<string, unknown> => {
      for (let n = 1 + Math.floor(r() * 3); n > 0; n--) {
        const path = pick(pathsOf(body).filter((p) => p.length > 0));
        let parent: any = body;
        for (const k of path.slice(0, -1)) parent = parent[k];
        const last = path[path.length - 1]!;
        if (r() < 0.25 && !Array.isArray(parent)) delete parent[last];
        else parent[last] = anyValue();
      }
      return body;
    };
    const one = async (): Promise<{ status: number; code: string | undefined; clean: boolean; what: string }> => {
      const path = pick(Object.keys(valid));
      const body = valid[path]!(pick(models));
      // Sometimes a flex race, sometimes a chain through the cloud routes (which may not fit the model).
      if (r() < 0.2) body.start_within = pick(['00h-00m-30s', '00h-00m-01s']);
      if (r() < 0.25) body.provider = pick([['cloud_a'], ['cloud_b'], ['vendor_b', 'cloud_a'], ['vendor_c', 'cloud_b'], ['vendor_a']]);
      let text = JSON.stringify(mutate(body));
      if (r() < 0.05) text = text.slice(0, Math.floor(r() * text.length));
      const res = await fetch(t.url + path, { method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' }, body: text });
      const answer = await res.text();
      let code: string | undefined;
      try { code = JSON.parse(answer)?.error?.code; } catch { code = undefined; }
      // A 200 carries no error object, in a body or in any event of a stream.
      return { status: res.status, code, clean: res.status !== 200 || !/"error":\{/.test(answer), what: `${path} ${text.slice(0, 300)} → ${answer.slice(0, 200)}` };
    };
    const statuses = new Map<string, number>();
    for (let batch = 0; batch < 100; batch++) {
      for (const o of await Promise.all(Array.from({ length: 20 }, one))) {
        const k = `${o.status} ${o.code ?? ''}`.trim();
        statuses.set(k, (statuses.get(k) ?? 0) + 1);
        assert.ok(o.status < 500, `5xx for ${o.what}`);
        if (o.status >= 400) assert.ok(o.code && o.code in ERRORS, `undocumented code ${o.code} for ${o.what}`);
        assert.ok(o.clean, `an error inside a 200 for ${o.what}`);
      }
    }
    console.log(`# inference fuzz answers: ${JSON.stringify(Object.fromEntries(statuses))}`);
    assert.ok((statuses.get('200') ?? 0) > 200, 'the fuzz reached answers');
    assert.ok((statuses.get('400 invalid_request') ?? 0) > 200 && (statuses.get('400 invalid_json') ?? 0) > 20, 'the fuzz reached validation');
    assert.deepEqual(t.logLines.filter((l) => /internal error/.test(l)), [], 'no request ended in internal_error');
    // The process still serves every format.
    for (const [path, body] of Object.entries(valid)) {
      const res = await fetch(t.url + path, { method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body(path === '/v1/messages' ? 'claude-haiku-4-5' : 'gpt-5.4-mini')) });
      assert.equal(res.status, 200, `${path} after the fuzz: ${await res.text()}`);
      await res.arrayBuffer().catch(() => undefined);
    }
  } finally {
    await t.close();
  }
});

test('the issue\'s admin cases answer 400, not 500, and a non-JSON cloud_a key is never echoed', async () => {
  const t = await startTestGateway();
  try {
    const org = await t.newOrg();
    const exempt = await fetch(`${t.url}/admin/v1/orgs/%ZZ/exempt`, { method: 'PUT', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: '{"exempt":true}' });
    assert.equal(exempt.status, 400);
    assert.equal(((await exempt.json()) as any).error.code, 'invalid_request');
    for (const body of [{ daily_spend_micro_usd: 1e300 }, { concurrency: 9007199254740992 }, { concurrency: -1 }, { concurrency: 1.5 }]) {
      const r = await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/overrides`, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.json.error.code, 'invalid_request');
    }
    assert.equal((await t.admin('POST', `/admin/v1/orgs/${org.orgId}/topups`, { cash_micro_usd: 9007199254740992 })).status, 400);
    const secret = 'sk-proj-PRIVATE-abcdefghijklmnop';
    const r = await t.admin('PUT', `/admin/v1/orgs/${org.orgId}/provider-keys/cloud_a`, { key: secret });
    assert.equal(r.status, 400);
    assert.doesNotMatch(JSON.stringify(r.json), /sk-proj/);
    assert.ok(t.secrets.has(secret), 'close() greps every log line for it');
    assert.equal((await t.admin('GET', '/admin/v1/orgs/org_doesnotexist/ledger')).json.error.code, 'org_not_found');
    assert.equal((await t.admin('DELETE', `/admin/v1/keys/${'%C0'}`)).status, 400);
  } finally {
    await t.close();
  }
});

test('an oversize simulator directive is refused and the process lives', async () => {
  const t = await startTestGateway();
  try {
    const org = await t.newOrg({ ownKeys: ['vendor_a'] });
    const post = (input: string) => fetch(`${t.url}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-mini', input, start_within: 'now', stream: true }),
    });
    const heap0 = process.memoryUsage().heapUsed;
    for (const d of [{ output_tokens: 20_000_000 }, { reasoning_tokens: 1e12 }, { standard_start_ms: 1e9 }, { fail: Array(1000).fill(500) }]) {
      const res = await post(sim(d));
      const body = await res.json() as any;
      assert.equal(res.status, 400, JSON.stringify(d));
      assert.equal(body.error.code, 'provider_rejected');
      assert.match(body.error.message, /#sim directive: .* (at most|from 0 to)/);
    }
    assert.ok(process.memoryUsage().heapUsed - heap0 < 100 * 1024 * 1024, 'no answer was generated');
    const ok = await post(sim({ output_tokens: 100_000, tokens_per_s: 0 }));
    assert.equal(ok.status, 200, 'the bound itself is served');
    assert.match(await ok.text(), /response\.completed/);
  } finally {
    await t.close();
  }
});

test('wrong admin tokens are counted per client address and limited; API keys keep their own count', async () => {
  const t = await startTestGateway({ config: { abuse_limits: { ...NO_LIMITS, failed_authentications: 5 } } });
  try {
    const org = await t.newOrg({ ownKeys: ['vendor_a'] });
    const attempt = (token: string) => fetch(`${t.url}/admin/v1/orgs`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{"name":"x"}' });
    for (let i = 0; i < 5; i++) assert.equal((await attempt(`guess-${i}`)).status, 401);
    const locked = await attempt('guess-6');
    assert.equal(locked.status, 429);
    assert.ok(Number(locked.headers.get('retry-after')) >= 1);
    assert.equal(((await locked.json()) as any).error.code, 'rate_limit_exceeded');
    assert.equal((await attempt(ADMIN_TOKEN)).status, 429, 'the right token from a locked address waits too');
    const inference = await fetch(`${t.url}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4-mini', input: 'hi', start_within: 'now' }),
    });
    assert.equal(inference.status, 200, 'API keys are counted apart');
  } finally {
    await t.close();
  }
});

test('trust_proxy: X-Forwarded-For names the client only through trusted proxies, and /v1/limits says so', async () => {
  const limits = { ...NO_LIMITS, failed_authentications: 3 };
  const bad = (url: string, xff?: string) => fetch(`${url}/v1/responses`, {
    method: 'POST', headers: { authorization: 'Bearer flex_live_wrong', 'content-type': 'application/json', ...(xff ? { 'x-forwarded-for': xff } : {}) }, body: '{}',
  }).then(async (r) => { await r.arrayBuffer(); return r.status; });

  const trusted = await startTestGateway({ config: { abuse_limits: limits, trust_proxy: ['127.0.0.0/8', '::1'] } });
  try {
    for (let i = 0; i < 3; i++) assert.equal(await bad(trusted.url, '203.0.113.7'), 401);
    assert.equal(await bad(trusted.url, '203.0.113.7'), 429, 'the named client is locked out');
    assert.equal(await bad(trusted.url, '203.0.113.8'), 401, 'another client behind the same proxy is not');
    assert.equal(await bad(trusted.url, '203.0.113.7, 127.0.0.1'), 429, 'trusted hops are skipped from the right');
    assert.equal(await bad(trusted.url, '203.0.113.8, 203.0.113.7'), 429, 'a forged left entry is not believed: the nearest untrusted hop is the client');
    const org = await trusted.newOrg();
    const l = await (await fetch(`${trusted.url}/v1/limits`, { headers: { authorization: `Bearer ${org.key}` } })).json() as any;
    assert.deepEqual(l.abuse_limits.client_ip, { source: 'x_forwarded_for', trusted_proxies: 2 });
  } finally {
    await trusted.close();
  }

  const direct = await startTestGateway({ config: { abuse_limits: limits } });
  try {
    const org = await direct.newOrg();
    const l = await (await fetch(`${direct.url}/v1/limits`, { headers: { authorization: `Bearer ${org.key}`, 'x-forwarded-for': '198.51.100.200' } })).json() as any;
    assert.deepEqual(l.abuse_limits.client_ip, { source: 'connection', trusted_proxies: 0 });
    for (let i = 0; i < 3; i++) assert.equal(await bad(direct.url, `198.51.100.${i}`), 401);
    assert.equal(await bad(direct.url, '198.51.100.99'), 429, 'without trust_proxy the header is ignored: every caller is the peer');
  } finally {
    await direct.close();
  }
});

test('an IPv6 caller is one caller across its /64: every address in it shares the lockout, the next /64 does not', async () => {
  const limits = { ...NO_LIMITS, failed_authentications: 3 };
  const t = await startTestGateway({ config: { abuse_limits: limits, trust_proxy: ['127.0.0.0/8', '::1'] } });
  const bad = (xff: string) => fetch(`${t.url}/v1/responses`, {
    method: 'POST', headers: { authorization: 'Bearer flex_live_wrong', 'content-type': 'application/json', 'x-forwarded-for': xff }, body: '{}',
  }).then(async (r) => { await r.arrayBuffer(); return r.status; });
  try {
    for (const a of ['2001:db8:1:2::1', '2001:db8:1:2:ffff::9', '2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd']) assert.equal(await bad(a), 401);
    assert.equal(await bad('2001:db8:1:2:1234::77'), 429, 'a fourth address of the same /64 is locked out');
    assert.equal(await bad('2001:db8:1:3::1'), 401, 'the neighbouring /64 is another caller');
  } finally {
    await t.close();
  }
});

test('subnet64 reads every IPv6 spelling', () => {
  assert.equal(subnet64('::1'), '0:0:0:0::/64');
  assert.equal(subnet64('2001:DB8::'), '2001:db8:0:0::/64');
  assert.equal(subnet64('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(subnet64('2001:db8:a:b:c:d:e:f'), '2001:db8:a:b::/64');
  assert.equal(subnet64('2001:db8:a::1.2.3.4'), '2001:db8:a:0::/64');
  assert.equal(subnet64('0001:0002:0003:0000::'), '1:2:3:0::/64');
});

test('clientIpResolver: CIDRs, IPv4-mapped peers, and no header without trust', () => {
  const req = (peer: string, xff?: string) => ({ socket: { remoteAddress: peer }, headers: xff ? { 'x-forwarded-for': xff } : {} }) as any;
  const none = clientIpResolver([]);
  assert.equal(none(req('::ffff:10.1.2.3', '1.2.3.4')), '10.1.2.3');
  const lb = clientIpResolver(['10.0.0.0/8', 'fd00::/8']);
  assert.equal(lb(req('10.9.9.9', '1.2.3.4')), '1.2.3.4');
  assert.equal(lb(req('::ffff:10.9.9.9', '1.2.3.4, 10.0.0.5')), '1.2.3.4');
  assert.equal(lb(req('fd00::1', '2001:db8::7')), '2001:db8:0:0::/64', 'an IPv6 caller is counted by its /64');
  assert.equal(lb(req('192.0.2.1', '1.2.3.4')), '192.0.2.1', 'an untrusted peer\'s header is ignored');
  assert.equal(lb(req('10.9.9.9')), '10.9.9.9', 'no header: the proxy itself');
  assert.equal(lb(req('10.9.9.9', '10.1.1.1')), '10.1.1.1', 'all trusted: the farthest hop');
  assert.throws(() => clientIpResolver(['10.0.0.0/33']), /trust_proxy/);
  assert.throws(() => clientIpResolver(['proxy.local']), /trust_proxy/);
});

test('a body nested thousands of levels deep is the caller\'s 400 invalid_request on every path that serializes it upstream, and the process lives', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  try {
    const own = await t.newOrg({ ownKeys: ['vendor_a', 'vendor_c', 'cloud_a'] });
    const managed = await t.newOrg({ balance: 5_000_000 });
    const deep = '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000);
    const send = (key: string, path: string, body: string): Promise<Response> =>
      fetch(t.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    const cases: Array<[string, string, string]> = [
      [own.key, '/v1/messages/count_tokens', `{"model":"claude-haiku-4-5","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":${deep}}]}`],
      [own.key, '/v1/messages', `{"model":"gpt-5.4-mini","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"start_within":"now","tools":[{"name":"f","input_schema":${deep}}]}`],
      [own.key, '/v1/chat/completions', `{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"hi"}],"start_within":"now","provider":["cloud_a"],"tools":[{"type":"function","function":{"name":"f","parameters":${deep}}}]}`],
    ];
    for (const [key, path, body] of cases) {
      const res = await send(key, path, body);
      const text = await res.text();
      assert.equal(res.status, 400, `${path}: ${text.slice(0, 300)}`);
      assert.match(text, /invalid_request/, path);
      assert.match(text, /nested too deeply/, path);
      assert.equal(res.headers.get('x-service-retries') ?? '0', '0', `${path}: not retried`);
    }
    assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
    const limits = await (await fetch(`${t.url}/v1/limits`, { headers: { authorization: `Bearer ${managed.key}` } })).json() as any;
    assert.equal(limits.managed.balance.remaining_micro_usd, 5_000_000, 'nothing charged');
  } finally { await t.close(); }
});

test('a provider failure on a managed route reaches the caller as its status without the provider\'s words (they describe the service\'s account); on an own key they are kept', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  try {
    const own = await t.newOrg({ ownKeys: ['vendor_a'] });
    const managed = await t.newOrg({ balance: 5_000_000 });
    const answer = async (key: string, id: string): Promise<any> => {
      const res = await fetch(`${t.url}/v1/responses`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-5.4-mini', input: `x ${sim({ fail: [500], id })}`, start_within: 'now' }),
      });
      assert.equal(res.status, 502);
      return (await res.json() as any).error;
    };
    const mine = await answer(own.key, 'edge-own-500');
    const theirs = await answer(managed.key, 'edge-managed-500');
    assert.equal(mine.code, 'provider_error');
    assert.equal(theirs.code, 'provider_error');
    assert.match(mine.message, /^The provider failed \(500\): ./);
    assert.equal(theirs.message, 'The provider failed (500).');
  } finally { await t.close(); }
});

test('a response schema or tool schema asking the simulator for a billion values, or referring to itself, is answered at once and the process lives', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  try {
    const org = await t.newOrg({ balance: 100_000_000 });
    const billion = { type: 'array', minItems: 1000, items: { type: 'array', minItems: 1000, items: { type: 'array', minItems: 1000, items: { type: 'integer' } } } };
    const selfRef = { anyOf: [{ $ref: '#' }] };
    const post = (path: string, body: object): Promise<Response> => fetch(t.url + path, {
      method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ start_within: 'now', ...body }),
    });
    const chat = (schema: object) => post('/v1/chat/completions', {
      model: 'gpt-5.4-mini', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
    });
    const tool = (schema: object) => post('/v1/messages', {
      model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }],
      tools: [{ name: 'f', input_schema: { type: 'object', properties: { v: schema }, required: ['v'] } }], tool_choice: { type: 'tool', name: 'f' },
    });
    for (const [label, send] of [['chat response_format', chat], ['messages tool', tool]] as const) {
      for (const schema of [billion, selfRef]) {
        const t0 = Date.now();
        const res = await send(schema);
        const text = await res.text();
        assert.equal(res.status, 200, `${label} ${JSON.stringify(schema)}: ${text.slice(0, 200)}`);
        assert.ok(text.length < 1024 * 1024, `${label}: ${text.length} bytes`);
        assert.ok(Date.now() - t0 < 5_000, `${label}: ${Date.now() - t0} ms`);
      }
    }
    const next = await chat({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] });
    assert.equal(next.status, 200, 'a following request is served');
    assert.equal(typeof JSON.parse((await next.json() as any).choices[0].message.content).a, 'string');
    assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
  } finally { await t.close(); }
});

test('a type or key named after an Object.prototype member (constructor, toString, __proto__) is an unknown one on every path, never a 500', async () => {
  const t = await startTestGateway({ config: { abuse_limits: NO_LIMITS } });
  try {
    const org = await t.newOrg({ balance: 100_000_000, ownKeys: ['cloud_a'] });
    const post = async (path: string, body: string): Promise<{ status: number; json: any }> => {
      const res = await fetch(t.url + path, {
        method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body,
      });
      return { status: res.status, json: await res.json() };
    };
    const names = ['constructor', 'toString', '__proto__', 'hasOwnProperty'];
    // Interactions hosted tools on cloud_a (Vertex): refused like the unknown type "bogus", naming the tool or its key.
    const interactions = (tool: string) => post('/v1/interactions', `{"model":"gemini-2.5-flash","input":"hi","start_within":"now","provider":["cloud_a"],"tools":[${tool}]}`);
    for (const name of ['bogus', ...names]) {
      const { status, json } = await interactions(`{"type":${JSON.stringify(name)}}`);
      assert.deepEqual([status, json.error?.code], [400, 'unsupported_parameter'], `tool type ${name}: ${JSON.stringify(json)}`);
      assert.match(json.error.message, new RegExp(`The "${name}" tool cannot be served on cloud_a`));
    }
    for (const name of ['bogus', ...names]) {
      const { status, json } = await interactions(`{"type":"google_search",${JSON.stringify(name)}:["web_search"]}`);
      assert.deepEqual([status, json.error?.code], [400, 'unsupported_parameter'], `google_search key ${name}: ${JSON.stringify(json)}`);
      assert.match(json.error.message, /The "google_search" tool as asked cannot be served on cloud_a/);
    }
    // A Messages block or an Interactions input item of such a type, translated for vendor A: dropped like any unknown one.
    for (const name of ['bogus_block', ...names]) {
      const messages = await post('/v1/messages', `{"model":"gpt-5.4-mini","max_tokens":20,"start_within":"now","messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":${JSON.stringify(name)}}]}]}`);
      assert.equal(messages.status, 200, `messages block ${name}: ${JSON.stringify(messages.json)}`);
      const items = await post('/v1/interactions', `{"model":"gpt-5.4-mini","start_within":"now","input":[{"type":"user_input","content":[{"type":"text","text":"hi"}]},{"type":${JSON.stringify(name)}}]}`);
      assert.equal(items.status, 200, `interactions item ${name}: ${JSON.stringify(items.json)}`);
    }
    assert.deepEqual(t.logLines.filter((l) => /"level":50/.test(l)), [], 'no internal error was logged');
  } finally { await t.close(); }
});
