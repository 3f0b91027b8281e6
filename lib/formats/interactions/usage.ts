// Interactions usage ⇄ IR usage. Gemini counts thought tokens outside total_output_tokens (the
// IR's outputTokens includes them) and cached tokens inside total_input_tokens (as the IR does).
// Tool-use prompt tokens (search results fed back to the model) are input the model read, so the
// IR's inputTokens includes them.
import type { IRUsage, Tier } from '../../ir.ts';

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export function usageFromInteractions(u: any): IRUsage {
  const thought = n(u?.total_thought_tokens);
  return {
    inputTokens: n(u?.total_input_tokens) + n(u?.total_tool_use_tokens),
    cachedInputTokens: n(u?.total_cached_tokens),
    cacheWriteTokens: 0,
    outputTokens: n(u?.total_output_tokens) + thought,
    reasoningTokens: thought,
  };
}

export function usageToInteractions(u: IRUsage): Record<string, number> {
  const output = Math.max(0, u.outputTokens - u.reasoningTokens);
  return {
    total_input_tokens: u.inputTokens,
    total_cached_tokens: u.cachedInputTokens,
    total_output_tokens: output,
    total_thought_tokens: u.reasoningTokens,
    total_tool_use_tokens: 0,
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

export const tierFromInteractions = (serviceTier: unknown): Tier => (serviceTier === 'flex' ? 'flex' : 'standard');

/** created/updated as the API writes them: ISO 8601 to the second. */
export const isoSeconds = (epochSeconds: number): string => new Date(epochSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
