// Validation of the four inference bodies: the endpoint's JSON Schema (compiled once), then the
// spec's rules, each with its own code. Pure: input is the parsed body, output the checked request.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FormatName, RouteName } from '../ir.ts';
import { GatewayError } from '../errors.ts';
import type { Catalog, ModelEntry } from '../catalog/catalog.ts';
import type { RetryPolicy } from '../machine/backoff.ts';
import { parseStartWithin, type StartWithin } from './start-within.ts';
import { parseBetas } from '../formats/messages/betas.ts';
import common from '../../schemas/common.json' with { type: 'json' };
import responsesSchema from '../../schemas/responses.json' with { type: 'json' };
import chatSchema from '../../schemas/chat.json' with { type: 'json' };
import messagesSchema from '../../schemas/messages.json' with { type: 'json' };
import interactionsSchema from '../../schemas/interactions.json' with { type: 'json' };
import countTokensSchema from '../../schemas/count-tokens.json' with { type: 'json' };

export type CallerFormat = 'responses' | 'chat' | 'messages' | 'interactions';

// validateSchema off: checking our own schemas against the meta-schema cost ~60 ms of every start;
// test/schemas.test.ts does it once, in the suite.
const ajv = new Ajv({ allErrors: false, strict: false, validateSchema: false });
ajv.addSchema(common);
const validators: Record<CallerFormat, ValidateFunction> = {
  responses: ajv.compile(responsesSchema),
  chat: ajv.compile(chatSchema),
  messages: ajv.compile(messagesSchema),
  interactions: ajv.compile(interactionsSchema),
};

const countTokensValidator: ValidateFunction = ajv.compile(countTokensSchema);

const ROUTE_NAMES = new Set<RouteName>(['vendor_a', 'vendor_b', 'vendor_c', 'cloud_a', 'cloud_b']);
const CLOUD = new Set<RouteName>(['cloud_a', 'cloud_b']);

/** Chat-native parameters that need vendor A's Chat endpoint (spec, POST /v1/chat/completions). */
const CHAT_NATIVE = ['presence_penalty', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'seed', 'stop', 'prediction', 'audio', 'modalities', 'web_search_options'];
/** Messages fields only vendor C understands (spec, POST /v1/messages). */
const VENDOR_C_NATIVE = ['top_k', 'stop_sequences', 'output_config', 'inference_geo', 'container'];
/** Experimental beta fields: never forwarded, refused with 400 (beta header values: lib/formats/messages/betas.ts). */
const BETA_FIELDS = ['betas', 'mcp_servers', 'context_management', 'container'];
/** Provider-held conversation state per caller format: the fields that refer to it and the one
 *  route that holds it (the API that issued the id). Such a request is pinned to that route. */
const STATE_FIELDS: Partial<Record<CallerFormat, { fields: string[]; route: RouteName }>> = {
  responses: { fields: ['previous_response_id', 'conversation'], route: 'vendor_a' },
  interactions: { fields: ['previous_interaction_id', 'continuation_token'], route: 'vendor_b' },
};
/** generation_config keys the Interactions format maps for every model. */
const MAPPED_GENERATION_CONFIG = new Set(['max_output_tokens', 'thinking_level', 'temperature', 'top_p', 'stop_sequences', 'tool_choice', 'thinking_summaries']);

export interface CheckedRequest {
  format: CallerFormat;
  model: ModelEntry;
  startWithin: StartWithin;
  routes: RouteName[];
  explicitProvider: boolean;
  retry?: RetryPolicy;
  includeCost: boolean;
  stream: boolean;
  includeUsage: boolean;        // Chat stream_options.include_usage
  chatPassthrough: boolean;     // Chat-native parameters present: vendor A's Chat endpoint
  body: Record<string, any>;    // the caller body without the gateway's own fields
  betas: string[];              // Messages: the understood `anthropic-beta` values, for the route adapters
  pinnedBy?: string;            // a conversation-state field: routes is its issuing route alone
}

export function checkRequest(format: CallerFormat, raw: Record<string, any>, catalog: Catalog, defaultStartWithin: string | null, betaHeader?: string | string[]): CheckedRequest {
  if (raw.start_within === undefined && defaultStartWithin === null) throw new GatewayError('missing_start_within', undefined, { param: 'start_within' });
  if (!validators[format](raw)) throw schemaError(validators[format].errors![0]!);
  const startWithin = parseStartWithin(raw.start_within ?? defaultStartWithin);
  const retry = parseRetry(raw.retry);
  const model = catalog.get(raw.model);
  if (!model) throw new GatewayError('model_not_found', `The model '${raw.model}' is not in the catalog.`, { param: 'model' });

  const explicitProvider = raw.provider !== undefined;
  let routes = explicitProvider ? parseProvider(raw.provider) : [model.routes[0]!];
  const pinnedBy = stateField(format, raw);
  if (pinnedBy) routes = pinToIssuingRoute(format, pinnedBy, routes, model);
  for (const r of routes) {
    if (!model.routes.includes(r)) throw new GatewayError('provider_model_mismatch', `The route '${r}' cannot serve '${model.id}'.`, { param: 'provider' });
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
    includeUsage: body.stream_options?.include_usage === true,
    chatPassthrough: false,
    body,
    betas: [],
    ...(pinnedBy ? { pinnedBy } : {}),
  };
  FORMAT_RULES[format](checked, betaHeader);
  return checked;
}

const FORMAT_RULES: Record<CallerFormat, (c: CheckedRequest, betaHeader: string | string[] | undefined) => void> = {
  responses(c) {
    delete c.body.service_tier;   // the tier follows from start_within
  },
  chat(c) {
    const b = c.body;
    if (b.n !== undefined && b.n > 1) throw new GatewayError('unsupported_value', 'n greater than 1 is not supported.', { param: 'n' });
    delete b.service_tier;
    const native = CHAT_NATIVE.filter((k) => isRealValue(k, b[k]));
    if (native.length === 0) return;
    if (c.model.family !== 'vendor_a') throw new GatewayError('unsupported_parameter', `'${native[0]}' is only supported on vendor A models.`, { param: native[0] });
    if (c.startWithin.kind === 'duration') throw new GatewayError('unsupported_parameter', `'${native[0]}' cannot be combined with a duration start_within; use "now".`, { param: native[0] });
    c.chatPassthrough = true;
  },
  messages(c, betaHeader) {
    const b = c.body;
    if (b.service_tier !== undefined) throw new GatewayError('service_tier_not_allowed', undefined, { param: 'service_tier' });
    const betaField = BETA_FIELDS.find((k) => b[k] !== undefined);
    if (betaField) throw new GatewayError('beta_not_supported', `The experimental field '${betaField}' is not supported by the gateway; turn it off in the client (for Claude Code: CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=1).`, { param: betaField });
    c.betas = parseBetas(betaHeader);
    if (c.model.family === 'vendor_c') return;
    // Structured output (output_config.format) translates to every route; anything else in
    // output_config (effort, …) is vendor C's own and refused naming output_config (spec).
    const field = VENDOR_C_NATIVE.find((k) => b[k] !== undefined && !(k === 'output_config' && isFormatOnly(b[k]))) ?? nativeBlockField(b);
    if (field) throw new GatewayError('unsupported_parameter', `'${field}' is only supported on vendor C models.`, { param: field });
  },
  interactions(c) {
    const b = c.body;
    if (b.service_tier !== undefined) throw new GatewayError('service_tier_not_allowed', undefined, { param: 'service_tier' });
    if (c.model.family === 'vendor_b' || !b.generation_config) return;
    const extra = Object.keys(b.generation_config).find((k) => !MAPPED_GENERATION_CONFIG.has(k));
    if (extra) throw new GatewayError('unsupported_generation_config', `generation_config.${extra} is only supported on vendor B models.`, { param: `generation_config.${extra}` });
  },
};

function isFormatOnly(v: unknown): boolean {
  return typeof v === 'object' && v !== null && Object.keys(v).every((k) => k === 'format');
}

function stateField(format: CallerFormat, raw: Record<string, any>): string | undefined {
  return STATE_FIELDS[format]?.fields.find((f) => raw[f] !== undefined && raw[f] !== null);
}

/** State held by one provider means nothing elsewhere: no flex onto another route (flex on the
 *  same route keeps it), no fallback; a chain or model that cannot run there is refused. */
function pinToIssuingRoute(format: CallerFormat, field: string, routes: RouteName[], model: ModelEntry): RouteName[] {
  const route = STATE_FIELDS[format]!.route;
  if (!model.routes.includes(route)) {
    throw new GatewayError('conversation_state_unroutable', `'${field}' refers to state held by ${route}, which cannot serve '${model.id}'; send the whole conversation instead.`, { param: field });
  }
  if (routes[0] !== route) {
    throw new GatewayError('conversation_state_unroutable', `'${field}' refers to state held by ${route}; provider[0] must be ${route} (no other route can honour it).`, { param: field });
  }
  return [route];
}

/** POST /v1/messages/count_tokens: the Messages count body (the SDK's MessageCountTokensParams;
 *  a start_within is accepted and ignored, nothing is generated), its model, the understood betas. */
export function checkCountTokens(raw: Record<string, any>, catalog: Catalog, betaHeader?: string | string[]): { model: ModelEntry; body: Record<string, any>; betas: string[] } {
  if (!countTokensValidator(raw)) throw schemaError(countTokensValidator.errors![0]!);
  const model = catalog.get(raw.model);
  if (!model) throw new GatewayError('model_not_found', `The model '${raw.model}' is not in the catalog.`, { param: 'model' });
  const betas = parseBetas(betaHeader);
  const { start_within: _s, ...body } = raw;
  return { model, body, betas };
}

/** A Chat-native parameter counts when set to a real value (not null/false/empty; text-only modalities do not). */
function isRealValue(key: string, v: unknown): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (key === 'modalities') return Array.isArray(v) && v.some((m) => m !== 'text');
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}

/** cache_control, citations, or a non-base64 document/file block anywhere in system or messages. */
function nativeBlockField(b: Record<string, any>): string | undefined {
  if (b.cache_control !== undefined) return 'cache_control';
  const blocks: any[] = [];
  if (Array.isArray(b.system)) blocks.push(...b.system);
  for (const m of b.messages ?? []) if (Array.isArray(m?.content)) blocks.push(...m.content);
  for (const t of b.tools ?? []) blocks.push(t);
  for (const blk of blocks) {
    if (blk?.cache_control !== undefined) return 'cache_control';
    if (blk?.citations !== undefined) return 'citations';
    if ((blk?.type === 'document' || blk?.type === 'file') && blk?.source?.type !== 'base64') return `${blk.type}`;
  }
  return undefined;
}

function parseProvider(v: unknown): RouteName[] {
  if (!Array.isArray(v) || v.length === 0 || v.some((r) => typeof r !== 'string' || !ROUTE_NAMES.has(r as RouteName)) || new Set(v).size !== v.length) {
    throw new GatewayError('invalid_provider_chain', undefined, { param: 'provider' });
  }
  return v as RouteName[];
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

function schemaError(e: ErrorObject): GatewayError {
  if (e.keyword === 'additionalProperties') {
    const p = String(e.params.additionalProperty);
    return new GatewayError('unsupported_parameter', `Unknown parameter '${p}'.`, { param: p });
  }
  const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : String(e.params.missingProperty ?? '');
  if (where === 'model' || e.params.missingProperty === 'model') return new GatewayError('invalid_request', `model ${e.message}.`, { param: 'model' });
  return new GatewayError('invalid_request', `${where || 'body'} ${e.message}.`, { param: where || undefined });
}

export type { FormatName };
