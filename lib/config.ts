// Configuration: defaults, then an optional JSON file (GATEWAY_CONFIG) validated by schemas/config.json.
// Without a file every route points at the built-in simulator and is served as managed.
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { ROUTES, type RouteName } from './routes.ts';
import { DEFAULT_MODELS, type Family, type ModelEntry } from './catalog/catalog.ts';
import type { LedgerConfig } from './ledger/types.ts';
import { checkConfig as checkLedgerConfig } from './ledger/rules.ts';
import type { SimulatorOptions } from './simulator/server.ts';
import { DEFAULT_FLEX_POLICY, type FlexPolicyConfig } from './routing/flex-policy.ts';
import { DEFAULT_USAGE, type UsageConfig } from './usage/service.ts';
import { DEFAULT_TIMEOUTS, type TimeoutsConfig } from './timeouts.ts';
import { DEFAULT_CAPACITY, type CapacityConfig } from './providers/capacity.ts';
import { DEFAULT_ORGANIZATION_API_REQUESTS } from './limits/abuse.ts';
import { DEFAULT_MAX_GROUPS } from './usage/query.ts';
import { egressProxyProblems, type EgressProxyConfig } from './providers/egress-proxy.ts';
import configSchema from '../schemas/config.json' with { type: 'json' };

// Each floor owns its settings and their defaults; this module assembles them (and re-exports the
// edge settings, which tests and the benchmarks tune).
export { DEFAULT_CAPACITY, DEFAULT_TIMEOUTS, ROUTES, type CapacityConfig, type TimeoutsConfig };

export interface AbuseConfig {
  organization_requests: number | null;
  api_key_requests: number | null;
  client_ip_requests: number | null;
  failed_authentications: number | null;
  /** Per organization per minute on /v1/usage… and /v1/organization…, apart from inference
   *  (lib/limits/abuse.ts); absent or null: unlimited. */
  organization_api_requests?: number | null;
  publish: boolean;
}

export interface GatewayConfig {
  /** Base URL per route; undefined means "the built-in simulator". cloud_a's allowed_token_uris:
   *  token endpoints an organization's service account may name besides Google's (and besides the
   *  token_uri of managed.cloud_a's, always allowed); default none. */
  routes: Partial<Record<RouteName, { base_url: string; connections?: number; allowed_token_uris?: string[] }>>;
  managed: Partial<Record<RouteName, { key: unknown; [k: string]: unknown }>>;
  models: ModelEntry[];
  flex_race_slots: number;
  hedge: { initial_lead_ms: number; min_lead_ms: number; max_lead_ms: number };
  flex_policy: FlexPolicyConfig;
  hold: { default_max_output_tokens: number };
  abuse_limits: AbuseConfig;
  ledger: LedgerConfig;
  /** Usage records: retention and the write queue; `max_groups`, the most groups one report
   *  answers (docs/usage.md "Bounds"). */
  usage: UsageConfig & { max_groups?: number };
  simulator?: SimulatorOptions;
  demo_balance_micro_usd: number;
  timeouts: TimeoutsConfig;
  capacity: CapacityConfig;
  /** Addresses or CIDRs of proxies whose X-Forwarded-For names the client (default none). */
  trust_proxy: string[];
  /** The forward proxy upstream calls go through: from HTTPS_PROXY, HTTP_PROXY and NO_PROXY (lib/main.ts),
   *  not from the file; absent: every call goes direct (lib/providers/egress-proxy.ts). */
  egress_proxy?: EgressProxyConfig;
  /** Browser callers on other origins (lib/http/cors.ts): `allowed_origins` lists the origins
   *  (`scheme://host[:port]`) whose pages may call the API, `["*"]` every origin; default none. */
  cors: CorsConfig;
  /** True when no file named the routes: start the simulator and serve every route managed on it. */
  useSimulator: boolean;
}

export interface CorsConfig { allowed_origins: string[] }

export const DEFAULT_LEDGER: LedgerConfig = {
  ramp: [
    { week: 0, concurrency: 2, daily_spend_micro_usd: 5_000_000 },
    { week: 1, concurrency: 8, daily_spend_micro_usd: 50_000_000 },
    { week: 2, concurrency: 32, daily_spend_micro_usd: 250_000_000 },
    { week: 4, concurrency: 128, daily_spend_micro_usd: 1_000_000_000 },
  ],
  hold_lease_ms: 30_000,   // renewed every 10 s while the request lives (issue 13: crash recovery in seconds)
  pools: [
    { name: 'direct', routes: ['vendor_a', 'vendor_b', 'vendor_c'], per_minute: 60_000 },
    { name: 'cloud', routes: ['cloud_a', 'cloud_b'], per_minute: 20_000 },
  ],
};

// The schema is meta-checked by test/schemas.test.ts, not at every start.
const validate = new Ajv({ allErrors: true, strict: false, validateSchema: false }).compile(configSchema);

export function loadConfig(path: string | undefined, overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  let file: Record<string, any> = {};
  if (path) {
    try { file = JSON.parse(readFileSync(path, 'utf8')); } catch (err) {
      throw new Error(`cannot read GATEWAY_CONFIG ${path}: ${(err as Error).message}`);
    }
    if (!validate(file)) throw new Error(`invalid GATEWAY_CONFIG ${path}: ${validate.errors!.map(schemaProblem).join('; ')}`);
  }
  const useSimulator = !file.routes;
  const cfg: GatewayConfig = {
    routes: file.routes ?? {},
    managed: file.managed ?? (useSimulator ? Object.fromEntries(ROUTES.map((route) => [route, { key: 'simulator' }])) : {}),
    models: file.models ?? DEFAULT_MODELS,
    flex_race_slots: file.flex_race_slots ?? 16,
    hedge: { initial_lead_ms: 2_000, min_lead_ms: 200, max_lead_ms: 60_000, ...file.hedge },
    flex_policy: { ...DEFAULT_FLEX_POLICY, ...file.flex_policy },
    hold: { default_max_output_tokens: 4_096, ...file.hold },
    abuse_limits: {
      organization_requests: null, api_key_requests: null, client_ip_requests: null, failed_authentications: 30,
      organization_api_requests: DEFAULT_ORGANIZATION_API_REQUESTS, publish: false, ...file.abuse_limits,
    },
    ledger: { ...DEFAULT_LEDGER, ...file.ledger },
    usage: { ...DEFAULT_USAGE, max_groups: DEFAULT_MAX_GROUPS, ...file.usage },
    simulator: file.simulator,
    demo_balance_micro_usd: file.demo_balance_micro_usd ?? 20_000_000,
    timeouts: { ...DEFAULT_TIMEOUTS, ...file.timeouts },
    capacity: { ...DEFAULT_CAPACITY, ...file.capacity },
    trust_proxy: file.trust_proxy ?? [],
    // Off by default: a sidecar's callers are servers; a browser app's origin is named on purpose.
    cors: { allowed_origins: [], ...file.cors },
    useSimulator,
    ...overrides,
  };
  // What the schema cannot say, checked on the whole result (a file's values and the overrides of
  // tests and entry points alike), so a configuration that would fail requests fails the start.
  const problems = [...urlProblems(cfg), ...modelProblems(cfg.models), ...ledgerProblems(cfg.ledger), ...boundProblems(cfg), ...managedKeyProblems(cfg), ...egressProxyProblems(cfg.egress_proxy), ...corsProblems(cfg.cors)];
  if (problems.length > 0) throw new Error(`invalid ${path ? `GATEWAY_CONFIG ${path}` : 'configuration'}: ${problems.join('; ')}`);
  return cfg;
}

/** One schema error as "<JSON pointer> <why>", naming the unknown property or the allowed values. */
function schemaProblem(error: ErrorObject): string {
  const at = error.instancePath || '/';
  if (error.keyword === 'additionalProperties') return `${at} ${error.message} ("${error.params.additionalProperty}")`;
  if (error.keyword === 'enum') return `${at} ${error.message} (${(error.params.allowedValues as unknown[]).join(', ')})`;
  return `${at} ${error.message}`;
}

/** `at` holds an absolute http or https URL, or the problem. The value is not quoted: a URL may
 *  carry credentials (user:password@, a key in the query). */
function httpUrlProblem(at: string, value: unknown): string | undefined {
  const problem = `${at} must be an absolute http or https URL, such as https://api.example.com/v1`;
  let url: URL;
  try { url = new URL(String(value)); } catch { return problem; }
  // "localhost:8080" parses, with the scheme "localhost:".
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${problem} (its scheme is ${url.protocol})`;
  return undefined;
}

/** Every URL the gateway will call: each route's base_url (new URL at start threw a bare
 *  "Invalid URL", and an ftp: one started and answered 502 to every request), the token endpoints
 *  cloud_a may use, and the token_uri of the service's own cloud_a key (parsed at its first use). */
function urlProblems(cfg: GatewayConfig): string[] {
  const problems: Array<string | undefined> = [];
  for (const [route, entry] of Object.entries(cfg.routes)) {
    problems.push(httpUrlProblem(`/routes/${route}/base_url`, entry?.base_url));
    entry?.allowed_token_uris?.forEach((uri, i) => problems.push(httpUrlProblem(`/routes/${route}/allowed_token_uris/${i}`, uri)));
  }
  // The key is the service-account object or its JSON text (a text that does not parse is the
  // adapter's to refuse); an empty token_uri means Google's.
  const key = cfg.managed.cloud_a?.key;
  let account: unknown = key;
  if (typeof key === 'string') try { account = JSON.parse(key); } catch { account = undefined; }
  const tokenUri = (account as { token_uri?: unknown } | null | undefined)?.token_uri;
  if (tokenUri !== undefined && tokenUri !== null && tokenUri !== '') {
    problems.push(httpUrlProblem('/managed/cloud_a/key/token_uri', tokenUri));
  }
  return problems.filter((problem) => problem !== undefined);
}

/** The routes that serve a family, its own (direct) route first: a route's adapter speaks one
 *  family's wire format (cloud_a Vertex's Gemini, cloud_b Bedrock's Messages). */
const FAMILY_ROUTES: Readonly<Record<Family, readonly RouteName[]>> = {
  vendor_a: ['vendor_a'], vendor_b: ['vendor_b', 'cloud_a'], vendor_c: ['vendor_c', 'cloud_b'],
};

/** A catalog the request path can serve: one entry per id (the catalog would keep the last
 *  silently); routes[0] the family's own route, since a request naming no provider runs there and
 *  it is the flex gate (a cloud route first would refuse every duration with
 *  flex_unsupported_on_cloud); only routes that speak the family's format; and no flex flag on
 *  vendor_c, which has no flex tier (its requests are refused flex, while /v1/models would list the
 *  model as flex_capable). */
function modelProblems(models: readonly ModelEntry[]): string[] {
  const problems: string[] = [];
  const firstAt = new Map<string, number>();
  models.forEach((model, i) => {
    const at = `/models/${i}`;
    const first = firstAt.get(model.id);
    if (first === undefined) firstAt.set(model.id, i);
    else problems.push(`${at}/id "${model.id}" is already the id of /models/${first}`);
    const serving = FAMILY_ROUTES[model.family] ?? [];
    const routes = model.routes ?? [];
    if (routes[0] !== model.family) {
      problems.push(`${at}/routes/0 must be ${model.family}, the family's own route (routes[0] is the model's native route)`);
    }
    routes.forEach((route, j) => {
      if (!serving.includes(route)) problems.push(`${at}/routes/${j} ${route} cannot serve the ${model.family} family (${serving.join(', ')} can)`);
    });
    if (model.flex && model.family === 'vendor_c') problems.push(`${at}/flex must be false: vendor_c has no flex tier`);
  });
  return problems;
}

/** Ranges the schema checks bound by bound but not against each other. */
function boundProblems(cfg: GatewayConfig): string[] {
  const { min_lead_ms: min, max_lead_ms: max } = cfg.hedge;
  return min > max ? [`/hedge/min_lead_ms (${min}) must not exceed /hedge/max_lead_ms (${max})`] : [];
}

/** A direct route's managed key is a string (a number or an object started, then every managed
 *  request to that route answered 502); the cloud routes' are checked by their adapters at start. */
function managedKeyProblems(cfg: GatewayConfig): string[] {
  const problems: string[] = [];
  for (const route of ['vendor_a', 'vendor_b', 'vendor_c'] as const) {
    const entry = cfg.managed[route];
    if (entry !== undefined && (typeof entry.key !== 'string' || entry.key === '')) problems.push(`/managed/${route}/key must be a non-empty string`);
  }
  return problems;
}

/** Each cors.allowed_origins entry is `*` or an origin as a browser sends it in Origin: scheme,
 *  host and a non-default port, lower case, no path or trailing slash (an entry that is not would
 *  never match, and its pages would fail their preflight with nothing said at start). */
function corsProblems(cors: CorsConfig): string[] {
  if (!Array.isArray(cors?.allowed_origins)) return ['/cors/allowed_origins must be an array of origins'];
  const problems: string[] = [];
  cors.allowed_origins.forEach((entry, i) => {
    if (entry === '*') return;
    const at = `/cors/allowed_origins/${i}`;
    const problem = `${at} must be "*" or an origin scheme://host[:port], such as https://app.example.com`;
    let url: URL;
    try { url = new URL(String(entry)); } catch { problems.push(problem); return; }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push(`${problem} (its scheme is ${url.protocol})`);
    // A browser's Origin never holds a wildcard: such an entry would never match.
    else if (url.hostname.includes('*')) problems.push(`${problem} (wildcards are not supported: list each origin, or "*" alone)`);
    // The origin alone is quoted: an entry with user:password@ would otherwise be logged whole.
    else if (url.origin !== entry) problems.push(`${problem} (did you mean ${url.origin}?)`);
  });
  return problems;
}

/** The ledger's own checks (lib/ledger/rules.ts, run again when it opens), here so a file's
 *  mistake is reported with the file's name before anything starts. */
function ledgerProblems(ledger: LedgerConfig): string[] {
  try { checkLedgerConfig(ledger); } catch (err) { return [`/ledger ${(err as Error).message.replace(/^ledger config: /, '')}`]; }
  return [];
}

/** The service's credential for a managed route: direct routes use `key`; cloud routes take the
 *  whole entry ({key, project?, location?} / {key, region?}), the same shape as an org's cloud key. */
export function managedCredential(cfg: GatewayConfig, route: RouteName): unknown | undefined {
  const entry = cfg.managed[route];
  if (!entry) return undefined;
  return route === 'cloud_a' || route === 'cloud_b' ? entry : entry.key;
}
