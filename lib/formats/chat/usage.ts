// Usage as Chat Completions writes it, to and from the IR's normalised shape. Like Responses, Chat
// counts cached tokens inside prompt_tokens and reasoning inside completion_tokens.
import type { CostExtras, IRUsage, Tier } from '../../ir.ts';
import { addCostExtras } from '../cost-extras.ts';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export function usageFromChat(u: any): IRUsage {
  return {
    inputTokens: num(u?.prompt_tokens),
    cachedInputTokens: num(u?.prompt_tokens_details?.cached_tokens),
    cacheWriteTokens: num(u?.prompt_tokens_details?.cache_write_tokens),
    outputTokens: num(u?.completion_tokens),
    reasoningTokens: num(u?.completion_tokens_details?.reasoning_tokens),
  };
}

export function usageToChat(u: IRUsage, extras?: CostExtras): Record<string, unknown> {
  const promptDetails: Record<string, number> = { cached_tokens: u.cachedInputTokens };
  if (u.cacheWriteTokens) promptDetails.cache_write_tokens = u.cacheWriteTokens;
  const usage: Record<string, unknown> = {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: promptDetails,
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
  };
  if (extras) addChatExtras(usage, extras);
  return usage;
}

/** The spec's cost-in-stream fields: input_tokens and output_tokens beside Chat's own names, then
 *  cost (when priced) and routing. Reads the token counts off the usage object itself so a
 *  passthrough frame keeps whatever the provider said. */
export function addChatExtras(usage: Record<string, unknown>, extras: CostExtras): void {
  addCostExtras(usage, extras, { input: num(usage.prompt_tokens), output: num(usage.completion_tokens) });
}

/** Chat reports the served tier on every chunk; absent (Azure, compatible servers) says nothing. */
export const tierOfChunk = (t: unknown): Tier | undefined =>
  typeof t === 'string' && t ? (t === 'flex' ? 'flex' : 'standard') : undefined;
