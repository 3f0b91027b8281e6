// Usage as Chat Completions writes it, to and from the IR's normalised shape. Like Responses, Chat
// counts cached tokens inside prompt_tokens and reasoning inside completion_tokens.
import type { CostExtras, IRUsage } from '../../ir.ts';
import { addCostExtras } from '../cost-extras.ts';
import { tierFromServiceTier } from '../openai-shared.ts';
import { tokenCount } from '../../json-util.ts';

export function usageFromChat(wire: any): IRUsage {
  return {
    inputTokens: tokenCount(wire?.prompt_tokens),
    cachedInputTokens: tokenCount(wire?.prompt_tokens_details?.cached_tokens),
    cacheWriteTokens: tokenCount(wire?.prompt_tokens_details?.cache_write_tokens),
    outputTokens: tokenCount(wire?.completion_tokens),
    reasoningTokens: tokenCount(wire?.completion_tokens_details?.reasoning_tokens),
  };
}

export function usageToChat(usage: IRUsage, extras?: CostExtras): Record<string, unknown> {
  const promptDetails: Record<string, number> = { cached_tokens: usage.cachedInputTokens };
  if (usage.cacheWriteTokens) promptDetails.cache_write_tokens = usage.cacheWriteTokens;
  const wire: Record<string, unknown> = {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: promptDetails,
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
  if (extras) addChatExtras(wire, extras);
  return wire;
}

/** The spec's cost-in-stream fields: input_tokens and output_tokens beside Chat's own names, then
 *  cost (when priced) and routing. Reads the token counts off the usage object itself so a
 *  passthrough frame keeps whatever the provider said. */
export function addChatExtras(usage: Record<string, unknown>, extras: CostExtras): void {
  addCostExtras(usage, extras, { input: tokenCount(usage.prompt_tokens), output: tokenCount(usage.completion_tokens) });
}

/** Chat reports the served tier on every chunk; absent (Azure, compatible servers) says nothing. */
export const tierOfChunk = tierFromServiceTier;
