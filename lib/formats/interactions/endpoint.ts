// POST /v1/interactions: the request rules of the Gemini Interactions format: the fields the gateway
// refuses (service_tier, delivery later), and the format's own extras (hosted tools,
// generation_config keys and levels, top-level fields only vendor B takes) checked against every
// route of the chain before anything is sent.
import { GatewayError } from '../../errors.ts';
import type { RouteName } from '../../routes.ts';
import type { CallerRequest, Endpoint } from '../types.ts';
import { lookupTable } from '../lookup-table.ts';
import { THINKING_LEVELS } from './request-decode.ts';
import schema from '../../../schemas/interactions.json' with { type: 'json' };

/** generation_config keys the Interactions format maps for every model. */
const MAPPED_GENERATION_CONFIG = new Set([
  'max_output_tokens', 'thinking_level', 'temperature', 'top_p', 'stop_sequences', 'tool_choice', 'thinking_summaries',
]);

/** What a route carries of the format's own extras. Vendor B's API is this format: everything goes
 *  as sent. cloud_a's Vertex generateContent (the same Gemini models) has a field for these hosted
 *  tools (per tool, the keys it may carry and their values) and generation_config keys, which its
 *  encoder maps (vertex/request-encode.ts; test/formats/interactions-fidelity.test.ts holds the two
 *  equal). A route not listed carries none. */
export const CARRIED_EXTRAS: Partial<Record<RouteName, 'all' | {
  tools: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
  generation: ReadonlySet<string>;
}>> = {
  vendor_b: 'all',
  cloud_a: {
    // Looked up with the caller's tool type and keys: tables without a prototype, so "constructor",
    // "toString" or "__proto__" is an unknown type or key (400 naming it), not a hit.
    tools: lookupTable({
      google_search: lookupTable({ search_types: ['web_search', 'image_search'] }), code_execution: lookupTable({}), url_context: lookupTable({}),
    }),
    generation: new Set(['seed']),
  },
};

const unsupported = (param: string, message: string) => new GatewayError('unsupported_parameter', message, { param });

export const interactionsEndpoint: Endpoint = {
  path: '/v1/interactions',
  schema,
  state: { fields: ['previous_interaction_id', 'continuation_token'], route: 'vendor_b' },
  check(request) {
    const body = request.body;
    if (body.service_tier !== undefined) throw new GatewayError('service_tier_not_allowed', undefined, { param: 'service_tier' });
    refuseLaterDelivery(body);
    refuseUncarriedExtras(request);
  },
  maxOutput(body) {
    const value = body.generation_config?.max_output_tokens;
    return Number.isInteger(value) ? value : undefined;
  },
};

/** Fields asking for the answer to be delivered later: run in the background and fetched with
 *  GET /v1/interactions/{id}, or pushed to a webhook. The gateway answers in this request's
 *  response only and serves no such GET, so that work could never be collected, and on a managed
 *  route it would run on the service's account, charged to no one. `background: false` is the
 *  default and changes nothing. */
function refuseLaterDelivery(body: Record<string, any>): void {
  if (body.background === true) {
    throw unsupported('background', "background: true is not supported: the gateway answers only in this request's response and keeps "
      + 'nothing to fetch later; leave it out or send false (stream: true for a long answer).');
  }
  if (body.webhook_config !== undefined && body.webhook_config !== null) {
    throw unsupported('webhook_config', 'webhook_config is not supported: the gateway answers only in this request\'s response and '
      + 'delivers nothing later.');
  }
}

/** Top-level fields of the format that shape the answer and that no translation carries (cloud_a's
 *  encoder maps none of them): vendor B takes them as sent, any other route would drop them. Each
 *  with what counts as asking: a default (absent, null, [], text-only modalities, text/plain)
 *  asks nothing and is dropped like an absent field (docs/decisions.md "Defaults are not values").
 *  Dropped off vendor B without a refusal, so not here: `labels` (billing tags on the caller's
 *  Google account; another provider's bill has no place for them and the answer is the same, as
 *  with Chat's `metadata` off vendor A) and `store` (storage at vendor B; no other route stores,
 *  and the answer's gw_unstored_ id says so). `background` and `webhook_config` are refused on
 *  every route (refuseLaterDelivery). */
const ANSWER_FIELDS: Readonly<Record<string, (value: unknown) => boolean>> = {
  cached_content: isValue, // a cached prompt the answer builds on
  safety_settings: isValue, // the caller's filter thresholds
  response_modalities: (v) => isValue(v) && !(Array.isArray(v) && v.every((m) => typeof m === 'string' && m.toLowerCase() === 'text')),
  // application/json is the IR's JSON output (request-decode.ts), which every route carries
  response_mime_type: (v) => isValue(v) && v !== 'text/plain' && v !== 'application/json',
  agent: isValue, agent_config: isValue, environment: isValue,
};

/** Hosted tools (google_search, code_execution, …), unmapped generation_config keys, a
 *  thinking_level outside the documented ones and the top-level ANSWER_FIELDS: carried as sent on
 *  vendor B, mapped on cloud_a where Vertex has the field, and refused wherever a route of the
 *  chain would drop them (a grounded answer asked for must not come back ungrounded), on a
 *  fallback route as on the first. On a model of another family an unmapped generation_config key
 *  keeps the spec's code. */
function refuseUncarriedExtras(request: CallerRequest): void {
  const body = request.body;
  const gc = body.generation_config;
  const extras = gc && typeof gc === 'object' ? Object.keys(gc).filter((k) => !MAPPED_GENERATION_CONFIG.has(k)) : [];
  // Vendor B judges a level it does not know; anywhere else it would be dropped.
  const oddLevel = gc && typeof gc === 'object' && isValue(gc.thinking_level) && !THINKING_LEVELS.has(gc.thinking_level);
  const field = Object.keys(ANSWER_FIELDS).find((k) => ANSWER_FIELDS[k]!(body[k]));
  const hosted = Array.isArray(body.tools) ? hostedTools(body.tools) : [];
  if (!extras.length && !hosted.length && !oddLevel && !field) return;
  if (request.model.family !== 'vendor_b') {
    if (oddLevel) throw unknownLevel('on models outside vendor B');
    if (extras.length) {
      const param = `generation_config.${extras[0]}`;
      throw new GatewayError('unsupported_generation_config', `${param} is only supported on vendor B models.`, { param });
    }
    if (field) throw unsupported(field, `${field} is only supported on vendor B models.`);
    const [i, tool] = hosted[0]!;
    throw unsupported(`tools[${i}]`, `The ${JSON.stringify(tool.type)} tool is only served on vendor B models.`);
  }
  for (const route of chainOf(request)) {
    const carried = CARRIED_EXTRAS[route];
    if (carried === 'all') continue;
    if (oddLevel) throw unknownLevel(`on ${route}; leave ${route} out of provider or send one of them`);
    if (field) {
      throw unsupported(field, `${field} cannot be served on ${route}, which has no such field; leave ${route} out of provider or `
        + 'drop the field.');
    }
    const extra = extras.find((k) => !carried?.generation.has(k));
    if (extra) {
      throw unsupported(`generation_config.${extra}`, `generation_config.${extra} cannot be served on ${route}, which has no such `
        + `field; leave ${route} out of provider or drop the key.`);
    }
    for (const [i, tool] of hosted) {
      const keys = typeof tool.type === 'string' ? carried?.tools[tool.type] : undefined; // ["google_search"] is no name
      const param = uncarriedToolParam(tool, keys, `tools[${i}]`);
      if (param) {
        throw unsupported(param, `The ${JSON.stringify(tool.type)} tool${param.includes('.') ? ' as asked' : ''} cannot be served on `
          + `${route}; leave ${route} out of provider or drop the tool.`);
      }
    }
  }
}

const unknownLevel = (where: string) => new GatewayError(
  'unsupported_value', `generation_config.thinking_level must be minimal, low, medium or high ${where}.`,
  { param: 'generation_config.thinking_level' },
);

/** Set to a value: not absent, null, false, "" nor an empty array or object. */
function isValue(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** The tools that are not function tools, with their index. */
function hostedTools(tools: unknown[]): [number, Record<string, any>][] {
  const out: [number, Record<string, any>][] = [];
  tools.forEach((tool: any, i) => { if (tool && typeof tool === 'object' && tool.type !== 'function') out.push([i, tool]); });
  return out;
}

/** Where a hosted tool asks what the route cannot carry: the tool (an unknown type), a key it has
 *  no field for, or a value it cannot take; undefined when it is carried whole. */
function uncarriedToolParam(
  tool: Record<string, any>, keys: Readonly<Record<string, readonly string[]>> | undefined, at: string,
): string | undefined {
  if (!keys) return at;
  for (const [key, value] of Object.entries(tool)) {
    if (key === 'type' || value === undefined || value === null) continue;
    const allowed = keys[key];
    if (!allowed) return `${at}.${key}`;
    if (!Array.isArray(value) || value.some((v) => !allowed.includes(v))) return `${at}.${key}`;
  }
  return undefined;
}

/** The routes the request may run on: validate.ts's CheckedRequest carries its chain (pinned state
 *  included); a CallerRequest without one runs on the model's native route. */
function chainOf(request: CallerRequest): readonly RouteName[] {
  return (request as CallerRequest & { routes?: readonly RouteName[] }).routes ?? request.model.routes.slice(0, 1);
}
