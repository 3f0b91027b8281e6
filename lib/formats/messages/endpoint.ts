// POST /v1/messages: the request rules of the Anthropic Messages format, its experimental betas
// (refused as body fields; understood `anthropic-beta` header values passed on, ./betas.ts) and the
// fields only vendor C understands.
import { GatewayError } from '../../errors.ts';
import type { Endpoint } from '../types.ts';
import { requestBetas } from './betas.ts';
import schema from '../../../schemas/messages.json' with { type: 'json' };

/** Messages fields only vendor C understands (spec, POST /v1/messages). */
const VENDOR_C_NATIVE = ['top_k', 'stop_sequences', 'output_config', 'inference_geo', 'container'];
/** Experimental beta fields: never forwarded, refused with 400 (beta header values: ./betas.ts). */
const BETA_FIELDS = ['betas', 'mcp_servers', 'context_management', 'container'];

export const messagesEndpoint: Endpoint = {
  path: '/v1/messages',
  schema,
  check(request, headers) {
    const body = request.body;
    if (body.service_tier !== undefined) throw new GatewayError('service_tier_not_allowed', undefined, { param: 'service_tier' });
    const betaField = BETA_FIELDS.find((k) => body[k] !== undefined);
    if (betaField) {
      const why = `The experimental field '${betaField}' is not supported by the gateway; turn it off in the client`
        + ' (for Claude Code: CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=1).';
      throw new GatewayError('beta_not_supported', why, { param: betaField });
    }
    request.betas = requestBetas(headers);
    if (request.model.family === 'vendor_c') return;
    // Structured output (output_config.format) translates to every route; anything else in
    // output_config (effort, …) is vendor C's own and refused naming output_config (spec).
    const isNative = (key: string): boolean => body[key] !== undefined && !(key === 'output_config' && isFormatOnly(body[key]));
    const native = VENDOR_C_NATIVE.find(isNative);
    const field = native ? { name: native, what: `'${native}'` } : nativeBlockField(body);
    if (field) throw new GatewayError('unsupported_parameter', `${field.what} is only supported on vendor C models.`, { param: field.name });
  },
  maxOutput(body) {
    return Number.isInteger(body.max_tokens) ? body.max_tokens : undefined;
  },
};

function isFormatOnly(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).every((k) => k === 'format');
}

/** cache_control, citations, or a document/file block other vendors cannot take (a document by URL
 *  they can: a PDF the provider fetches, docs/decisions.md) anywhere in system, messages (the
 *  blocks inside a tool_result too) or tools: the field's name and how the refusal names it. */
function nativeBlockField(body: Record<string, any>): { name: string; what: string } | undefined {
  const field = (name: string) => ({ name, what: `'${name}'` });
  if (body.cache_control !== undefined) return field('cache_control');
  const blocks: any[] = [];
  if (Array.isArray(body.system)) blocks.push(...body.system);
  for (const message of body.messages ?? []) {
    if (!Array.isArray(message?.content)) continue;
    for (const block of message.content) {
      blocks.push(block);
      // A tool_result's own blocks carry the same fields; the translation would drop them there.
      if (block?.type === 'tool_result' && Array.isArray(block.content)) blocks.push(...block.content);
    }
  }
  // The schema leaves tools untyped (the translation names what is wrong with them): not an array,
  // they hold no block to look at here.
  if (Array.isArray(body.tools)) blocks.push(...body.tools);
  for (const block of blocks) {
    if (block?.cache_control !== undefined) return field('cache_control');
    if (block?.citations !== undefined) return field('citations');
    const source = block?.source?.type;
    if ((block?.type === 'document' || block?.type === 'file') && source !== 'base64' && !(block.type === 'document' && source === 'url')) {
      return { name: block.type, what: `A '${block.type}' with a ${JSON.stringify(String(source))} source` };
    }
  }
  return undefined;
}
