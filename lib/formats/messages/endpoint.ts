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
  check(c, headers) {
    const b = c.body;
    if (b.service_tier !== undefined) throw new GatewayError('service_tier_not_allowed', undefined, { param: 'service_tier' });
    const betaField = BETA_FIELDS.find((k) => b[k] !== undefined);
    if (betaField) {
      const why = `The experimental field '${betaField}' is not supported by the gateway; turn it off in the client`
        + ' (for Claude Code: CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=1).';
      throw new GatewayError('beta_not_supported', why, { param: betaField });
    }
    c.betas = requestBetas(headers);
    if (c.model.family === 'vendor_c') return;
    // Structured output (output_config.format) translates to every route; anything else in
    // output_config (effort, …) is vendor C's own and refused naming output_config (spec).
    const field = VENDOR_C_NATIVE.find((k) => b[k] !== undefined && !(k === 'output_config' && isFormatOnly(b[k]))) ?? nativeBlockField(b);
    if (field) throw new GatewayError('unsupported_parameter', `'${field}' is only supported on vendor C models.`, { param: field });
  },
  maxOutput(body) {
    return Number.isInteger(body.max_tokens) ? body.max_tokens : undefined;
  },
};

function isFormatOnly(v: unknown): boolean {
  return typeof v === 'object' && v !== null && Object.keys(v).every((k) => k === 'format');
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
