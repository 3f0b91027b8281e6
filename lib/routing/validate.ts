// Validation of an inference body: the caller format's JSON Schema (compiled once), the spec's
// shared rules (start_within, provider, retry, model), then the format's own rules, which its codec's
// endpoint holds. Each rule has its own code. Pure: input is the parsed body and the request
// headers, output the checked request.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { IncomingHttpHeaders } from 'node:http';
import { type FormatName } from '../ir.ts';
import { ROUTES, type RouteName } from '../routes.ts';
import { GatewayError } from '../errors.ts';
import type { Catalog, ModelEntry } from '../catalog/catalog.ts';
import { CALLER_CODECS, type CallerFormat } from '../formats/index.ts';
import type { CallerRequest, Endpoint } from '../formats/types.ts';
import type { RetryPolicy } from '../machine/backoff.ts';
import { parseStartWithin, type StartWithin } from './start-within.ts';
import { requestBetas } from '../formats/messages/betas.ts';
import { isUnstoredInteractionId, UNSTORED_INTERACTION_PREFIX } from '../formats/interactions/ids.ts';
import common from '../../schemas/common.json' with { type: 'json' };
import countTokensSchema from '../../schemas/count-tokens.json' with { type: 'json' };

export type { CallerFormat };

// validateSchema off: checking our own schemas against the meta-schema cost ~60 ms of every start;
// test/schemas.test.ts does it once, in the suite.
const ajv = new Ajv({ allErrors: false, strict: false, validateSchema: false });
ajv.addSchema(common);
/** Each caller format's endpoint with its schema compiled (once, at load). */
const ENDPOINTS = Object.fromEntries(Object.entries(CALLER_CODECS).map(([format, codec]) =>
  [format, { ...codec.endpoint, validate: ajv.compile(codec.endpoint.schema) }])) as Record<CallerFormat, CompiledEndpoint>;
type CompiledEndpoint = Endpoint & { validate: ValidateFunction };

const countTokensValidator: ValidateFunction = ajv.compile(countTokensSchema);

const ROUTE_NAMES = new Set<RouteName>(ROUTES);
const CLOUD = new Set<RouteName>(['cloud_a', 'cloud_b']);

/** The request as the floors above read it: the codec's CallerRequest and the shared decisions. */
export interface CheckedRequest extends CallerRequest {
  format: CallerFormat;
  startWithin: StartWithin;
  routes: RouteName[];
  explicitProvider: boolean;
  retry?: RetryPolicy;
  includeCost: boolean;
  stream: boolean;
  pinnedBy?: string;            // a conversation-state field: routes is its issuing route alone
  pinnedId?: string;            // … and the id it names (a conversation object's id)
}

/** The shared rules (start_within, provider, retry, the model and its routes), then the caller
 *  format's own (its endpoint's check, which reads the request headers it needs). */
export function checkRequest(
  format: CallerFormat, raw: Record<string, any>, catalog: Catalog, defaultStartWithin: string | null, headers: IncomingHttpHeaders = {},
  defaultProvider: string | null = null,
): CheckedRequest {
  const endpoint = ENDPOINTS[format];
  if (raw.start_within === undefined && defaultStartWithin === null) {
    throw new GatewayError('missing_start_within', undefined, { param: 'start_within' });
  }
  if (format === 'messages' && raw.thread !== undefined) throw threadRefusal();
  if (!endpoint.validate(raw)) throw schemaError(endpoint.validate.errors![0]!);
  // Only an absent field takes the key's default: an explicit null is a value, and not a valid one
  // (the schema already refused it as invalid_start_within).
  const startWithin = parseStartWithin(raw.start_within === undefined ? defaultStartWithin : raw.start_within);
  const retry = parseRetry(raw.retry);
  const model = catalog.get(raw.model);
  if (!model) throw new GatewayError('model_not_found', `The model '${raw.model}' is not in the catalog.`, { param: 'model' });

  // An agent key's chain (stored checked, as space-separated names) stands for an absent field, as
  // if the body had named it: a route that cannot serve the model is refused the same way.
  const explicitProvider = raw.provider !== undefined || defaultProvider !== null;
  let routes = raw.provider !== undefined ? parseProvider(raw.provider)
    : defaultProvider !== null ? defaultProvider.split(' ') as RouteName[] : [model.routes[0]!];
  const pinnedBy = stateField(endpoint, raw);
  if (pinnedBy) {
    refuseUnstored(pinnedBy, raw[pinnedBy]);
    // A key's chain that holds the issuing route gives way to it (the caller named no route);
    // one that does not is refused as a body's would be, the message naming the key's.
    const issuing = endpoint.state!.route;
    const keyChain = raw.provider === undefined && defaultProvider !== null;
    routes = pinToIssuingRoute(issuing, pinnedBy, keyChain && routes.includes(issuing) ? [issuing] : routes, model, keyChain);
  }
  for (const route of routes) {
    if (!model.routes.includes(route)) {
      const whose = raw.provider === undefined && defaultProvider !== null ? ' (the API key\'s default_provider)' : '';
      throw new GatewayError('provider_model_mismatch', `The route '${route}'${whose} cannot serve '${model.id}'.`, { param: 'provider' });
    }
  }
  if (startWithin.kind === 'duration') {
    if (CLOUD.has(routes[0]!)) throw new GatewayError('flex_unsupported_on_cloud', undefined, { param: 'start_within' });
    if (model.family === 'vendor_c') throw new GatewayError('flex_unsupported_for_vendor_c', undefined, { param: 'start_within' });
    if (!model.flex) throw new GatewayError('flex_model_not_capable', undefined, { param: 'start_within' });
  }

  const { start_within: _s, include_cost, provider: _p, retry: _r, ...body } = raw;
  const checked: CheckedRequest = {
    format, model, startWithin, routes, explicitProvider, retry,
    includeCost: include_cost === true,
    stream: body.stream === true,
    includeUsage: false,
    ownWire: true,
    body,
    betas: [],
    ...(pinnedBy ? { pinnedBy, pinnedId: stateId(raw[pinnedBy]) } : {}),
  };
  endpoint.check(checked, headers);
  return checked;
}

function stateField(endpoint: Endpoint, raw: Record<string, any>): string | undefined {
  return endpoint.state?.fields.find((f) => raw[f] !== undefined && raw[f] !== null);
}

/** The id a state field names: a string, or an object with one (Responses `conversation`). */
function stateId(value: unknown): string {
  if (typeof value === 'string') return value;
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id : '';
}

/** An interaction id the gateway minted for an answer no provider stored (one translated from
 *  another API, or served by cloud_a: formats/interactions/ids.ts) names no state any route holds:
 *  refused here, before vendor B is asked and answers an unknown id with a 404. */
function refuseUnstored(field: string, value: unknown): void {
  if (field !== 'previous_interaction_id' || typeof value !== 'string' || !isUnstoredInteractionId(value)) return;
  const why = `Interaction '${value}' was not stored: ids beginning '${UNSTORED_INTERACTION_PREFIX}' are the gateway's, for an answer `
    + 'translated from another API or served by cloud_a, which no provider keeps; send the whole conversation instead.';
  throw new GatewayError('conversation_state_unroutable', why, { param: field });
}

/** What each provider answers for a state id it does not hold (the simulator's wording, that of
 *  the real APIs). A managed route answers this, as the gateway's usual provider_rejected 404,
 *  for an id issued to another org: the same answer as an id never issued, so none can be probed. */
const STATE_NOT_FOUND: Readonly<Record<string, (id: string) => string>> = {
  previous_response_id: (id) => `Previous response with id '${id}' not found.`,
  conversation: (id) => `Conversation with id '${id}' not found.`,
  previous_interaction_id: (id) => `Interaction '${id}' was not found.`,
  continuation_token: () => 'The continuation token was not found.',
};

export function stateNotFound(field: string, id: string): GatewayError {
  const message = STATE_NOT_FOUND[field]?.(id) ?? `'${field}' was not found.`;
  return new GatewayError('provider_rejected', `The provider rejected the request: ${message}`, { status: 404 });
}

/** State held by one provider means nothing elsewhere: no flex onto another route (flex on the
 *  same route keeps it), no fallback; a chain or model that cannot run there is refused. */
function pinToIssuingRoute(route: RouteName, field: string, routes: RouteName[], model: ModelEntry, keyChain = false): RouteName[] {
  if (!model.routes.includes(route)) {
    const why = `'${field}' refers to state held by ${route}, which cannot serve '${model.id}'; send the whole conversation instead.`;
    throw new GatewayError('conversation_state_unroutable', why, { param: field });
  }
  if (routes[0] !== route) {
    const why = keyChain
      ? `'${field}' refers to state held by ${route}, which the API key's default_provider (${routes.join(', ')}) does not include; send the whole conversation instead, or name provider.`
      : `'${field}' refers to state held by ${route}; provider[0] must be ${route} (no other route can honour it).`;
    throw new GatewayError('conversation_state_unroutable', why, { param: field });
  }
  return [route];
}

/** POST /v1/messages/count_tokens: the Messages count body (the SDK's MessageCountTokensParams;
 *  a start_within is accepted and ignored, nothing is generated), its model, the understood betas. */
export function checkCountTokens(
  raw: Record<string, any>, catalog: Catalog, headers: IncomingHttpHeaders = {},
): { model: ModelEntry; body: Record<string, any>; betas: string[] } {
  if (!countTokensValidator(raw)) throw schemaError(countTokensValidator.errors![0]!);
  const model = catalog.get(raw.model);
  if (!model) throw new GatewayError('model_not_found', `The model '${raw.model}' is not in the catalog.`, { param: 'model' });
  const betas = requestBetas(headers);
  const { start_within: _s, ...body } = raw;
  return { model, body, betas };
}

/** Messages `thread` (server-held conversations, beta message-threads-*): no route can hold one
 *  for the gateway, so it is refused, never forwarded or dropped, with the rejection Anthropic gives
 *  a request threads cannot serve. @anthropic-ai/sdk's thread and toolRunner read that
 *  `error.details.error_code` and send the turn again without `thread`, with the whole history;
 *  any other 400 ends the run. The code stays the gateway's own. */
function threadRefusal(): GatewayError {
  return new GatewayError(
    'unsupported_parameter', 'Message threads are not supported by the gateway; send the whole conversation without thread.',
    { param: 'thread', details: { error_code: 'thread_unsupported_request' } },
  );
}

/** An agent key's defaults (README "Agent keys"), checked by the rules of the request fields they
 *  stand for: `start_within`'s, and `provider`'s chain (each route's fit to a model is checked
 *  per request, as for a chain in the body). */
export function keyDefaults(startWithin: unknown, provider: unknown): { startWithin: string | null; provider: RouteName[] | null } {
  const deadline = startWithin === null ? null : parseStartWithin(startWithin, 'default_start_within');
  const chain = provider === null ? null : parseProvider(provider, 'default_provider');
  // A key whose every request would be refused for the pair (a race on a cloud route) is refused now.
  if (deadline?.kind === 'duration' && chain && CLOUD.has(chain[0]!)) {
    const why = `A key whose default_start_within is a duration cannot have a cloud route (${chain[0]}) first in its `
      + 'default_provider: a cloud route has no flex tier to race.';
    throw new GatewayError('flex_unsupported_on_cloud', why, { param: 'default_provider' });
  }
  return { startWithin: startWithin as string | null, provider: chain };
}

function parseProvider(value: unknown, param = 'provider'): RouteName[] {
  const isRoute = (route: unknown): boolean => typeof route === 'string' && ROUTE_NAMES.has(route as RouteName);
  if (!Array.isArray(value) || value.length === 0 || !value.every(isRoute) || new Set(value).size !== value.length) {
    throw new GatewayError('invalid_provider_chain', `${param} must be a non-empty array of distinct routes: ${ROUTES.join(', ')}.`, { param });
  }
  return value as RouteName[];
}

function parseRetry(v: unknown): RetryPolicy | undefined {
  if (v === undefined) return undefined;
  const bad = (): GatewayError => new GatewayError('invalid_retry', undefined, { param: 'retry' });
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad();
  const { count, backoff = 'exponential', jitter = true, ...rest } = v as Record<string, unknown>;
  if (Object.keys(rest).length || !Number.isInteger(count) || (count as number) < 1 || (count as number) > 5) throw bad();
  if (backoff !== 'exponential' && backoff !== 'linear') throw bad();
  if (typeof jitter !== 'boolean') throw bad();
  return { count: count as number, backoff, jitter };
}

function schemaError(error: ErrorObject): GatewayError {
  if (error.keyword === 'additionalProperties') {
    const param = String(error.params.additionalProperty);
    return new GatewayError('unsupported_parameter', `Unknown parameter '${param}'.`, { param });
  }
  const where = error.instancePath ? error.instancePath.slice(1).replace(/\//g, '.') : String(error.params.missingProperty ?? '');
  // start_within that is not a string (null, a number, an object…) is not "HHh-MMm-SSs" or "now":
  // the code for that is invalid_start_within, whichever check saw it first.
  if (where === 'start_within') return new GatewayError('invalid_start_within', undefined, { param: 'start_within' });
  if (where === 'model' || error.params.missingProperty === 'model') {
    return new GatewayError('invalid_request', `model ${error.message}.`, { param: 'model' });
  }
  return new GatewayError('invalid_request', `${where || 'body'} ${error.message}.`, { param: where || undefined });
}

export type { FormatName };
