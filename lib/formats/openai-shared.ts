// What the two OpenAI formats (Responses and Chat Completions) share: ids, data URLs, the tier
// names, native fields laid over an encoded body (a Chat caller's translated for Responses), and
// the error envelope. A codec folder imports no other codec folder, so what two of them share
// lives here.
import { randomString } from '../random-id.ts';
import type { Tier } from '../routes.ts';
import { GatewayError } from '../errors.ts';
import { isPlainObject } from '../json-util.ts';

export const newId = (prefix: string): string => prefix + randomString(24, 'hex');

/** Splits `data:<media>;base64,<data>` into its parts; undefined for anything else. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]*)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1] || 'application/octet-stream', data: match[2] } : undefined;
}

export const dataUrl = (mediaType: string | undefined, data: string): string =>
  `data:${mediaType ?? 'application/octet-stream'};base64,${data}`;

/** The tier OpenAI reports as served: "flex" is flex; default, scale, priority… are standard. A
 *  response that names none (Azure, compatible servers, some recordings) says nothing: undefined,
 *  and the committed tier stands (it is what the passthrough tap charges too). */
export const tierFromServiceTier = (t: unknown): Tier | undefined =>
  typeof t === 'string' && t ? (t === 'flex' ? 'flex' : 'standard') : undefined;
export const serviceTierOf = (t: Tier): 'flex' | 'default' => (t === 'flex' ? 'flex' : 'default');

// Fields only the caller's own OpenAI family understands travel in IRRequest.native; a same-family
// encoder lays them over the body it built. Arrays (hosted tools beside function tools) are
// appended and objects (text.verbosity beside text.format) merged, so a native field adds to what
// the IR said instead of replacing it.
export function mergeNative(body: Record<string, any>, fields: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(fields)) {
    const have = body[key];
    if (Array.isArray(have) && Array.isArray(value)) body[key] = [...have, ...value];
    else if (isPlainObject(have) && isPlainObject(value)) body[key] = { ...have, ...value };
    else body[key] = value;
  }
}

/** Chat-native parameters (spec, POST /v1/chat/completions): set to a real value, they send a Chat
 *  body to vendor A's Chat endpoint as it is, so they are never translated. */
export const CHAT_NATIVE = [
  'presence_penalty', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'seed', 'stop', 'prediction', 'audio', 'modalities',
  'web_search_options',
];

/** Chat-native numbers whose 0 is OpenAI's default, which the OpenAI Playground's code sends as
 *  it is. A seed of 0 is not among them: it is a real seed. */
const ZERO_IS_DEFAULT = new Set(['presence_penalty', 'frequency_penalty', 'top_logprobs']);

/** A Chat-native parameter counts when set to a real value (not null/false/empty/a default 0;
 *  text-only modalities do not). */
export function isRealChatNative(key: string, value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (value === 0 && ZERO_IS_DEFAULT.has(key)) return false;
  if (key === 'modalities') return Array.isArray(value) && value.some((m) => m !== 'text');
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value as object).length > 0;
  return true;
}

/** Chat fields whose Responses field has the same name and shape. */
const SAME_IN_RESPONSES = new Set([
  'metadata', 'moderation', 'parallel_tool_calls', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention',
  'safety_identifier', 'store', 'user',
]);

/** A Chat caller's native fields in the Responses shape, for mergeNative: a Chat caller on vendor A
 *  rides the Responses wire and must get what calling Chat would have given it. A field Responses
 *  cannot take is refused, never dropped. */
export function chatFieldsAsResponses(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (SAME_IN_RESPONSES.has(key)) out[key] = value;
    else if (key === 'reasoning_effort') out.reasoning = { effort: value }; // 'none', 'xhigh'… as sent
    else if (key === 'verbosity') out.text = { verbosity: value };
    else if (key === 'tool_choice' && isPlainObject(value) && value.type === 'allowed_tools') out.tool_choice = allowedTools(value);
    else if (CHAT_NATIVE.includes(key) && !isRealChatNative(key, value)) continue; // the default (false, 0, [], ['text']…)
    else {
      // Custom tools and their choices, legacy functions: their calls would come back in a form
      // the IR cannot carry.
      throw new GatewayError('unsupported_parameter', `'${key}' cannot be translated to the Responses API.`, { param: key });
    }
  }
  return out;
}

/** Chat's {allowed_tools: {mode, tools: [{type: 'function', function: {name}}]}} → Responses' flat form. */
function allowedTools(choice: Record<string, any>): Record<string, unknown> {
  const { mode, tools } = choice.allowed_tools ?? {};
  const flat = Array.isArray(tools)
    ? tools.map((t: any) => (t?.type === 'function' && isPlainObject(t.function) ? { type: 'function', name: t.function.name } : t))
    : tools;
  return { type: 'allowed_tools', mode, tools: flat };
}

const openaiType = (status: number): string =>
  status === 401 ? 'authentication_error'
    : status === 403 ? 'permission_error'
    : status === 402 ? 'insufficient_quota'
    : status === 404 ? 'not_found_error'
    : status === 429 ? 'rate_limit_error'
    : status >= 500 ? 'server_error'
    : 'invalid_request_error';

/** OpenAI's error envelope, the spec's code string in error.code (the SDKs expose it there). */
export const openaiErrorBody = (err: GatewayError): Record<string, unknown> =>
  ({ error: { message: err.message, type: openaiType(err.status), param: err.param ?? null, code: err.code } });

/** OpenAI's input files are documents: audio goes only as Chat's input_audio, video nowhere. A
 *  file part of either (an Interactions audio or video part) is refused, not sent as a file
 *  OpenAI would refuse in its own words. */
export function refuseAudioVideo(mediaType: string | undefined, param: string): void {
  if (!mediaType?.startsWith('audio/') && !mediaType?.startsWith('video/')) return;
  throw new GatewayError('unsupported_parameter', `Vendor A models take no ${mediaType} input as a file.`, { param });
}
