// A configuration the request path cannot serve is refused when it loads, naming the field: a
// timer past node's bound (it would fire after 1 ms), a hold renewed less than twice per lease, a
// catalog entry no request for it could be priced or routed with, a route URL that is not http(s).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_LEDGER, loadConfig, type GatewayConfig } from '../lib/config.ts';
import { DEFAULT_MODELS } from '../lib/catalog/catalog.ts';
import configSchema from '../schemas/config.json' with { type: 'json' };

const dir = mkdtempSync(join(tmpdir(), 'config-validation-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** loadConfig on a GATEWAY_CONFIG file holding `config`. */
function load(config: unknown): GatewayConfig {
  const file = join(dir, `config-${files++}.json`);
  writeFileSync(file, JSON.stringify(config));
  return loadConfig(file);
}

/** The message loadConfig refuses `config` with (fails the test if it loads). */
function refusal(config: unknown): string {
  try { load(config); } catch (err) { return (err as Error).message; }
  assert.fail(`loaded: ${JSON.stringify(config)}`);
}

// ── timers ──────────────────────────────────────────────────────────────────────────────────────

const TIMER_MAX = 2_147_483_647; // node runs a setTimeout/setInterval longer than this after 1 ms

/** Every `*_ms` property of the schema, as a JSON pointer. */
function msFields(schema: Record<string, any>, at = ''): string[] {
  return Object.entries((schema.properties ?? {}) as Record<string, Record<string, any>>).flatMap(([name, sub]) =>
    name.endsWith('_ms') ? [`${at}/${name}`] : msFields(sub, `${at}/${name}`));
}

/** `{a: {b: value}}` for the pointer /a/b. */
const at = (pointer: string, value: unknown): Record<string, unknown> =>
  pointer.split('/').slice(1).reduceRight<any>((inner, key) => ({ [key]: inner }), value);

test('every millisecond setting is refused past 2^31 − 1 (a timer would fire after 1 ms), naming its path; 2^31 − 1 loads', () => {
  const fields = msFields(configSchema);
  const expected = [
    ...['request_headers_ms', 'request_body_ms', 'request_body_idle_ms', 'upstream_connect_ms', 'upstream_first_byte_ms',
      'upstream_idle_ms', 'upstream_nonstream_ms', 'caller_idle_ms', 'shutdown_drain_ms', 'stream_head_ms'].map((f) => `/timeouts/${f}`),
    '/capacity/wait_ms', '/usage/flush_interval_ms', '/usage/prune_interval_ms', '/ledger/hold_lease_ms', '/ledger/hold_renew_ms',
    '/hedge/initial_lead_ms', '/hedge/min_lead_ms', '/hedge/max_lead_ms', '/flex_policy/flex_half_life_ms', '/flex_policy/standard_half_life_ms',
  ];
  for (const field of expected) assert.ok(fields.includes(field), `${field} is in the schema`);
  for (const field of fields) {
    assert.match(refusal(at(field, TIMER_MAX + 1)), new RegExp(`${field} must be <= ${TIMER_MAX}`), field);
    if (field === '/ledger/hold_renew_ms') {
      // Within the timer bound; refused only by the renewal rule (at most half the lease).
      const why = refusal(at(field, TIMER_MAX));
      assert.doesNotMatch(why, /must be <=/);
      assert.match(why, /hold_renew_ms \(2147483647\) must be .*half of hold_lease_ms/);
      assert.equal(load({ ledger: { hold_lease_ms: TIMER_MAX, hold_renew_ms: Math.floor(TIMER_MAX / 2) } }).ledger.hold_renew_ms, 1_073_741_823);
      continue;
    }
    const [section, name] = field.split('/').slice(1) as [keyof GatewayConfig, string];
    // The hedge's least lead may not pass its greatest: raise both.
    const config = field === '/hedge/min_lead_ms' ? { hedge: { min_lead_ms: TIMER_MAX, max_lead_ms: TIMER_MAX } } : at(field, TIMER_MAX);
    assert.equal((load(config)[section] as Record<string, unknown>)[name], TIMER_MAX, field);
  }
});

// ── hold renewal ────────────────────────────────────────────────────────────────────────────────

test('a hold renewed less than twice per lease is refused, naming both fields; the default renewal passes', () => {
  for (const renew of [60_000, 30_000, 20_000]) {
    const why = refusal({ ledger: { hold_lease_ms: 30_000, hold_renew_ms: renew } });
    assert.match(why, new RegExp(`/ledger hold_renew_ms \\(${renew}\\) must be .*at most half of hold_lease_ms \\(30000\\)`));
  }
  assert.equal(load({ ledger: { hold_lease_ms: 30_000, hold_renew_ms: 15_000 } }).ledger.hold_renew_ms, 15_000);
  assert.equal(load({ ledger: { hold_lease_ms: 60_000, hold_renew_ms: 200 } }).ledger.hold_lease_ms, 60_000);
  // Only the lease given: the gateway renews every max(1000, lease / 3) ms, at most half of any
  // lease the schema accepts (at least 2000; 1000–1999 would be renewed every 1000 ms).
  for (const lease of [2_000, 3_000, 30_000]) {
    const ledger = load({ ledger: { hold_lease_ms: lease } }).ledger;
    assert.equal(ledger.hold_renew_ms, undefined);
    assert.ok(Math.max(1_000, Math.floor(lease / 3)) * 2 <= lease);
  }
  assert.match(refusal({ ledger: { hold_lease_ms: 1_999 } }), /\/ledger\/hold_lease_ms must be >= 2000/);
  // The reviewer's case (lease 1 s, renewal every 60 s), set by an entry point instead of a file.
  assert.throws(() => loadConfig(undefined, { ledger: { ...DEFAULT_LEDGER, hold_lease_ms: 1_000, hold_renew_ms: 60_000 } }),
    /^Error: invalid configuration: \/ledger hold_renew_ms \(60000\) must be .*half of hold_lease_ms \(1000\)/);
});

// ── the model catalog ───────────────────────────────────────────────────────────────────────────

const RATES = { input: 1_000_000, cached_input: 100_000, output: 5_000_000 };
const MODEL = { id: 'm', family: 'vendor_b', routes: ['vendor_b', 'cloud_a'], flex: true, prices: { standard: RATES, flex: RATES } };

test('the built-in catalog passes the schema and the catalog checks', () => {
  assert.deepEqual(load({ models: DEFAULT_MODELS }).models, JSON.parse(JSON.stringify(DEFAULT_MODELS)));
  assert.doesNotThrow(() => loadConfig(undefined));
  assert.equal(load({ models: [MODEL] }).models[0]!.id, 'm');
  const bedrock = { id: 'c', family: 'vendor_c', routes: ['vendor_c', 'cloud_b'], flex: false, prices: { standard: RATES },
    route_model_ids: { cloud_b: 'vendor.c-v1:0' } };
  assert.equal(load({ models: [bedrock] }).models[0]!.route_model_ids?.cloud_b, 'vendor.c-v1:0');
});

test('a catalog entry that a request could not be priced or routed with is refused, naming its path', () => {
  const { flex: _flex, ...standardOnly } = MODEL.prices;
  const cases: Array<[unknown, RegExp]> = [
    [{ ...MODEL, prices: {} }, /\/models\/0\/prices must have required property 'standard'/],
    [{ ...MODEL, prices: { standard: { ...RATES, input: '2.5' } } }, /\/models\/0\/prices\/standard\/input must be integer/],
    [{ ...MODEL, prices: { standard: RATES, flex: { input: 1 } } }, /\/models\/0\/prices\/flex must have required property 'cached_input'/],
    [{ ...MODEL, routes: ['nowhere'] }, /\/models\/0\/routes\/0 must be equal to one of the allowed values \(vendor_a, vendor_b, vendor_c, cloud_a, cloud_b\)/],
    [{ ...MODEL, routes: [] }, /\/models\/0\/routes must NOT have fewer than 1 items/],
    [{ ...MODEL, routes: ['vendor_b', 'vendor_b'] }, /\/models\/0\/routes must NOT have duplicate items/],
    [{ ...MODEL, routes: 'vendor_b' }, /\/models\/0\/routes must be array/],
    [{ ...MODEL, id: '' }, /\/models\/0\/id must NOT have fewer than 1 characters/],
    [{ ...MODEL, id: 7 }, /\/models\/0\/id must be string/],
    [{ ...MODEL, family: 'vendor_d' }, /\/models\/0\/family must be equal to one of the allowed values \(vendor_a, vendor_b, vendor_c\)/],
    [{ ...MODEL, flex: 'yes' }, /\/models\/0\/flex must be boolean/],
    [(({ flex: _f, ...rest }) => rest)(MODEL), /\/models\/0 must have required property 'flex'/],
    [{ ...MODEL, price: standardOnly }, /\/models\/0 must NOT have additional properties \("price"\)/],
    [{ ...MODEL, route_model_ids: { nowhere: 'x' } }, /\/models\/0\/route_model_ids must NOT have additional properties \("nowhere"\)/],
    [{ ...MODEL, route_model_ids: { cloud_a: '' } }, /\/models\/0\/route_model_ids\/cloud_a must NOT have fewer than 1 characters/],
    // Beyond the schema (lib/config.ts): the native route first, only routes that speak the family's
    // format, no flex flag where the family has no flex tier.
    [{ ...MODEL, routes: ['cloud_a', 'vendor_b'] }, /\/models\/0\/routes\/0 must be vendor_b, the family's own route/],
    [{ ...MODEL, routes: ['vendor_b', 'cloud_b'] }, /\/models\/0\/routes\/1 cloud_b cannot serve the vendor_b family \(vendor_b, cloud_a can\)/],
    [{ ...MODEL, family: 'vendor_a', routes: ['vendor_a', 'vendor_c'] }, /\/models\/0\/routes\/1 vendor_c cannot serve the vendor_a family/],
    [{ ...MODEL, family: 'vendor_c', routes: ['vendor_c'], flex: true }, /\/models\/0\/flex must be false: vendor_c has no flex tier/],
  ];
  for (const [model, why] of cases) assert.match(refusal({ models: [model] }), why, JSON.stringify(model));
  // A second entry with an id already taken (the catalog kept the last one silently).
  assert.match(refusal({ models: [MODEL, { ...MODEL, prices: { standard: RATES } }] }), /\/models\/1\/id "m" is already the id of \/models\/0/);
  assert.throws(() => loadConfig(undefined, { models: [DEFAULT_MODELS[0]!, DEFAULT_MODELS[0]!] }),
    /invalid configuration: \/models\/1\/id "gpt-5.5" is already the id of \/models\/0/);
});

// ── URLs ────────────────────────────────────────────────────────────────────────────────────────

test('a route base_url, an allowed token URI or the managed cloud_a token_uri that is not an absolute http(s) URL is refused, naming its path', () => {
  const routes = (base_url: string) => ({ routes: { vendor_a: { base_url } }, managed: { vendor_a: { key: 'k' } } });
  assert.match(refusal(routes('api.openai.com/v1')), /\/routes\/vendor_a\/base_url must be an absolute http or https URL/);
  assert.match(refusal(routes('not a url')), /\/routes\/vendor_a\/base_url must be an absolute http or https URL/);
  assert.match(refusal(routes('ftp://x')), /\/routes\/vendor_a\/base_url must be an absolute http or https URL, .*\(its scheme is ftp:\)/);
  const secret = refusal(routes('ftp://user:s3cret@x/v1'));
  assert.match(secret, /\/routes\/vendor_a\/base_url/);
  assert.doesNotMatch(secret, /s3cret/, 'a URL is not quoted: it may carry credentials');
  for (const ok of ['https://api.openai.com/v1', 'http://127.0.0.1:9', 'HTTPS://Example.COM/a/']) {
    assert.equal(load(routes(ok)).routes.vendor_a!.base_url, ok);
  }
  assert.match(refusal({ routes: { cloud_b: { base_url: 'bedrock-runtime.us-east-1.amazonaws.com' } } }), /\/routes\/cloud_b\/base_url must be/);

  const cloudA = (allowed: string[]) => ({ routes: { cloud_a: { base_url: 'https://vertex.example', allowed_token_uris: allowed } } });
  assert.match(refusal(cloudA(['https://sts.corp.example/token', 'sts.corp.example/token'])),
    /\/routes\/cloud_a\/allowed_token_uris\/1 must be an absolute http or https URL/);
  assert.match(refusal(cloudA(['file:///etc/token'])), /\/routes\/cloud_a\/allowed_token_uris\/0 must be an absolute http or https URL, .*\(its scheme is file:\)/);
  assert.deepEqual(load(cloudA(['https://sts.corp.example/token'])).routes.cloud_a!.allowed_token_uris, ['https://sts.corp.example/token']);

  const account = { type: 'service_account', client_email: 'a@b.example', private_key: 'k', project_id: 'p' };
  const managed = (key: unknown) => ({ routes: { cloud_a: { base_url: 'https://vertex.example' } }, managed: { cloud_a: { key } } });
  assert.match(refusal(managed({ ...account, token_uri: 'oauth2.googleapis.com/token' })), /\/managed\/cloud_a\/key\/token_uri must be an absolute http or https URL/);
  assert.match(refusal(managed(JSON.stringify({ ...account, token_uri: 'ftp://t/token' }))), /\/managed\/cloud_a\/key\/token_uri must be an absolute http or https URL, .*\(its scheme is ftp:\)/);
  for (const token_uri of [undefined, '', 'https://oauth2.googleapis.com/token']) {
    assert.doesNotThrow(() => load(managed({ ...account, token_uri })));
  }
  // An entry point's overrides are checked as a file is.
  assert.throws(() => loadConfig(undefined, { routes: { vendor_b: { base_url: 'localhost:8080' } }, useSimulator: false }),
    /invalid configuration: \/routes\/vendor_b\/base_url must be an absolute http or https URL, .*\(its scheme is localhost:\)/);
});

test("ranges checked against each other, and a direct route's managed key, are refused at start", () => {
  assert.match(refusal({ hedge: { min_lead_ms: 5_000, max_lead_ms: 1_000 } }), /\/hedge\/min_lead_ms \(5000\) must not exceed \/hedge\/max_lead_ms \(1000\)/);
  assert.equal(load({ hedge: { min_lead_ms: 1_000, max_lead_ms: 1_000 } }).hedge.max_lead_ms, 1_000);
  const routes = { vendor_a: { base_url: 'https://api.example.com/v1' } };
  assert.match(refusal({ routes, managed: { vendor_a: { key: 12345 } } }), /\/managed\/vendor_a\/key must be a non-empty string/);
  assert.match(refusal({ routes, managed: { vendor_a: { key: '' } } }), /\/managed\/vendor_a\/key must be a non-empty string/);
  assert.equal(load({ routes, managed: { vendor_a: { key: 'sk-service' } } }).managed.vendor_a!.key, 'sk-service');
});
