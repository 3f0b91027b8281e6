// The `anthropic-beta` values the gateway understands, kept as data: a beta is judged by what it
// turns on, not by its presence. The spec refuses *experimental* betas; the line is a client's own
// "no experimental betas" mode (what Claude Code still sends with
// CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=1, what the AI SDK sends for structured outputs).
// Any value not listed here is refused with 400 beta_not_supported naming it.
//
// Per route, a listed value is (the route adapters apply it: lib/providers/anthropic.ts, bedrock.ts):
//   vendor_c  forwarded in the `anthropic-beta` header;
//   cloud_b   sent in Bedrock's `anthropic_beta` body field when `bedrock` is true, else dropped;
//   others    `translated` (the IR already carries what it turns on: the target's own reasoning,
//             effort or JSON schema fields) or `dropped` (it changes nothing there); their
//             adapters never see the header.
// To extend: add an entry (value, what it turns on, bedrock, elsewhere) and a line in
// docs/decisions.md ("Anthropic betas"); a value whose feature the IR cannot carry stays out.
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../errors.ts';
import { lookupTable } from '../lookup-table.ts';

export interface BetaEntry {
  /** What the beta turns on. */
  enables: string;
  /** Bedrock accepts it in the body's `anthropic_beta` list. */
  bedrock: boolean;
  /** On routes outside the vendor C family. */
  elsewhere: 'translated' | 'dropped';
}

/** Looked up with header values (bedrock.ts too): no prototype, so "constructor" is no beta. */
export const MESSAGES_BETAS: Readonly<Record<string, BetaEntry>> = lookupTable({
  'claude-code-20250219': { enables: "Claude Code's client identity (no request field)", bedrock: false, elsewhere: 'dropped' },
  'interleaved-thinking-2025-05-14': { enables: 'thinking between tool calls', bedrock: true, elsewhere: 'translated' },
  'effort-2025-11-24': { enables: 'output_config.effort', bedrock: true, elsewhere: 'dropped' },
  'structured-outputs-2025-11-13': { enables: 'output_config.format json_schema and strict tools', bedrock: true, elsewhere: 'translated' },
  // What @anthropic-ai/sdk's beta.messages.parse sends, for the same output_config.format. Kept
  // off Bedrock's list: structured outputs need no beta there (generally available), and Bedrock
  // refuses a beta flag it does not know.
  'structured-outputs-2025-12-15': { enables: 'output_config.format json_schema and strict tools', bedrock: false, elsewhere: 'translated' },
  'fine-grained-tool-streaming-2025-05-14': { enables: 'tool arguments streamed unbuffered', bedrock: true, elsewhere: 'dropped' },
  'prompt-caching-2024-07-31': { enables: 'cache_control (generally available)', bedrock: false, elsewhere: 'dropped' },
  'token-counting-2024-11-01': { enables: 'POST /v1/messages/count_tokens (generally available)', bedrock: false, elsewhere: 'dropped' },
});

/** The understood betas a Messages request's headers name (the `anthropic-beta` header). */
export const requestBetas = (headers: IncomingHttpHeaders): string[] => parseBetas(headers['anthropic-beta']);

/** Parses an `anthropic-beta` header (comma-separated, possibly repeated); refuses the first
 *  value the gateway does not understand, by name. */
export function parseBetas(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const values = (Array.isArray(header) ? header.join(',') : header).split(',').map((v) => v.trim()).filter(Boolean);
  const unknown = values.find((v) => !Object.hasOwn(MESSAGES_BETAS, v));
  if (unknown !== undefined) {
    throw new GatewayError(
      'beta_not_supported',
      `The beta '${unknown}' is not supported by the gateway; turn it off in the client`
        + ' (for Claude Code: CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=1).',
      { param: 'anthropic-beta' },
    );
  }
  return [...new Set(values)];
}
