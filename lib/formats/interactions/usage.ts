// Interactions usage ⇄ IR usage. Gemini counts thought tokens outside total_output_tokens (the
// IR's outputTokens includes them) and cached tokens inside total_input_tokens (as the IR does).
// Tool-use prompt tokens (search results fed back to the model) are input the model read, so the
// IR's inputTokens includes them; Interactions counts them outside total_input_tokens, so they are
// kept apart too (toolUseTokens) to be written back there.
import type { IRUsage } from '../../ir.ts';
import type { Tier } from '../../routes.ts';
import { tokenCount } from '../../json-util.ts';

export function usageFromInteractions(wire: any): IRUsage {
  const thought = tokenCount(wire?.total_thought_tokens);
  const toolUse = tokenCount(wire?.total_tool_use_tokens);
  return {
    inputTokens: tokenCount(wire?.total_input_tokens) + toolUse,
    cachedInputTokens: tokenCount(wire?.total_cached_tokens),
    cacheWriteTokens: 0,
    ...(toolUse ? { toolUseTokens: toolUse } : {}),
    outputTokens: tokenCount(wire?.total_output_tokens) + thought,
    reasoningTokens: thought,
  };
}

export function usageToInteractions(usage: IRUsage): Record<string, number> {
  const output = Math.max(0, usage.outputTokens - usage.reasoningTokens);
  const toolUse = usage.toolUseTokens ?? 0;
  return {
    total_input_tokens: usage.inputTokens - toolUse,
    total_cached_tokens: usage.cachedInputTokens,
    total_output_tokens: output,
    total_thought_tokens: usage.reasoningTokens,
    total_tool_use_tokens: toolUse,
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** The tier an interaction says served; one that names none says nothing (the committed tier stands). */
export const tierFromInteractions = (serviceTier: unknown): Tier | undefined =>
  typeof serviceTier === 'string' && serviceTier ? (serviceTier === 'flex' ? 'flex' : 'standard') : undefined;

/** created/updated as the API writes them: ISO 8601 to the second. */
export const isoSeconds = (epochSeconds: number): string => new Date(epochSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
