// The egress proxy settings (lib/providers/egress-proxy.ts): which variables count, which origins
// NO_PROXY exempts, and how a proxy is named where its credentials must not appear.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EgressProxy, egressProxyFromEnv, egressProxyProblems, noProxyMatches, parseNoProxy } from '../../lib/providers/egress-proxy.ts';
import { loadConfig } from '../../lib/config.ts';

test('the environment: lower-case names win, an empty one unsets, nothing set is no settings', () => {
  assert.deepEqual(egressProxyFromEnv({ HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:2', NO_PROXY: 'a', no_proxy: 'b' }),
    { http: undefined, https: 'http://lower:2', no_proxy: 'b' });
  assert.deepEqual(egressProxyFromEnv({ HTTP_PROXY: 'http://p:3128' }), { http: 'http://p:3128', https: undefined, no_proxy: undefined });
  assert.equal(egressProxyFromEnv({ HTTPS_PROXY: 'http://upper:1', https_proxy: '' }), undefined);
  assert.equal(egressProxyFromEnv({ NO_PROXY: 'example.com' }), undefined);
});

test('NO_PROXY: hosts and their subdomains, leading dot or star, host:port, IPv6, and *', () => {
  const entries = parseNoProxy('example.com, .corp.internal *.svc.local,vertex.test:8443 [::1]:9000 fd00::2');
  const exempt = (host: string, port: number): boolean => noProxyMatches(entries, host, port);
  assert.ok(exempt('example.com', 443));
  assert.ok(exempt('api.example.com', 443));
  assert.ok(!exempt('badexample.com', 443), 'a suffix counts at a dot only');
  assert.ok(exempt('corp.internal', 80) && exempt('a.corp.internal', 80));
  assert.ok(exempt('x.svc.local', 443));
  assert.ok(exempt('vertex.test', 8443) && !exempt('vertex.test', 443), 'host:port names that port only');
  assert.ok(exempt('::1', 9000) && !exempt('::1', 80));
  assert.ok(exempt('fd00::2', 443));
  assert.ok(!exempt('127.0.0.1', 80) && !exempt('localhost', 80), 'loopback is not implied');
  assert.ok(noProxyMatches(parseNoProxy('*'), 'anything.example', 443));
  assert.deepEqual(parseNoProxy(' , '), []);
});

test('NO_PROXY address ranges (CIDR, as Kubernetes sets them) match providers given by address, not names', () => {
  const entries = parseNoProxy('10.0.0.0/8,fd00::/8,192.168.1.0/24');
  const exempt = (host: string): boolean => noProxyMatches(entries, host, 443);
  assert.ok(exempt('10.1.2.3') && exempt('192.168.1.77') && exempt('fd00::1'));
  assert.ok(!exempt('11.0.0.1') && !exempt('192.168.2.1') && !exempt('fe80::1'));
  assert.ok(!exempt('ten.internal'), 'a name is not resolved to be matched');
  assert.equal(new EgressProxy({ https: 'http://p:1', no_proxy: '10.0.0.0/8' }).proxyFor('https://10.1.2.3:8080'), undefined);
});

test('the proxy for an origin: HTTPS_PROXY for https, HTTP_PROXY for http (no fallback), NO_PROXY first', () => {
  const egress = new EgressProxy({ https: 'http://user:p%40ss@secure.proxy:8080', http: 'plain.proxy:3128', no_proxy: 'Example.COM' });
  assert.deepEqual(egress.proxyFor('https://api.openai.com'),
    { uri: 'http://secure.proxy:8080', token: `Basic ${Buffer.from('user:p@ss').toString('base64')}`, shown: 'http://secure.proxy:8080' });
  assert.deepEqual(egress.proxyFor('http://127.0.0.1:9000'), { uri: 'http://plain.proxy:3128', token: undefined, shown: 'http://plain.proxy:3128' });
  assert.equal(egress.proxyFor('https://API.example.com'), undefined);
  assert.equal(new EgressProxy({ http: 'http://p:1' }).proxyFor('https://api.openai.com'), undefined, 'HTTP_PROXY is not used for https');
  assert.equal(new EgressProxy(undefined).proxyFor('https://api.openai.com'), undefined);
  assert.equal(new EgressProxy({ https: 'http://[::1]:3128' }).proxyFor('https://[fd00::1]:443')?.shown, 'http://[::1]:3128');
});

test('the start line names the proxies and NO_PROXY, never a password', () => {
  const line = new EgressProxy({ https: 'http://user:hunter2secret@proxy.corp:3128', no_proxy: 'localhost,127.0.0.1' }).describe();
  assert.equal(line, 'upstream calls go through proxy http://proxy.corp:3128 (https) (NO_PROXY: localhost,127.0.0.1)');
  assert.equal(new EgressProxy(undefined).describe(), undefined);
});

test('a proxy URL that is not http or https fails the start, without quoting it', () => {
  assert.deepEqual(egressProxyProblems({ https: 'http://proxy:3128', http: 'proxy.corp:8080' }), []);
  const problems = egressProxyProblems({ https: 'socks5://user:hunter2secret@proxy:1080', http: 'http://' });
  assert.equal(problems.length, 2);
  assert.ok(problems.every((p) => !p.includes('hunter2')), problems.join('; '));
  assert.throws(() => loadConfig(undefined, { egress_proxy: { https: 'ftp://proxy:21' } }), /egress_proxy\.https \(HTTPS_PROXY\) must be an http:\/\/ or https:\/\/ proxy URL/);
  // A raw % in the password stops the start by name, not with a URIError's stack.
  const raw = egressProxyProblems({ http: 'http://user:50%off@127.0.0.1:3128' });
  assert.equal(raw.length, 1);
  assert.match(raw[0]!, /HTTP_PROXY\) has a user or password that is not percent-encoded/);
  assert.ok(!raw[0]!.includes('50%off'));
});
