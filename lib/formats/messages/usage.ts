// Anthropic usage ⇄ IR usage. Anthropic's input_tokens excludes cache reads and writes (the IR's
// inputTokens includes them), and every counter is a cumulative total: a later frame overwrites.
import type { IRUsage, Tier } from '../../ir.ts';

/** The four counters as Anthropic reports them, plus thinking tokens when the wire has them. */
export interface AnthropicCounters { input: number; cacheRead: number; cacheWrite: number; output: number; thinking: number }

export const zeroCounters = (): AnthropicCounters => ({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0, thinking: 0 });

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Overwrite the counters a usage object carries; absent or null fields keep their value. */
export function mergeAnthropicUsage(c: AnthropicCounters, u: any): void {
  if (!u || typeof u !== 'object') return;
  c.input = num(u.input_tokens) ?? c.input;
  c.cacheRead = num(u.cache_read_input_tokens) ?? c.cacheRead;
  c.cacheWrite = num(u.cache_creation_input_tokens) ?? c.cacheWrite;
  c.output = num(u.output_tokens) ?? c.output;
  c.thinking = num(u.output_tokens_details?.thinking_tokens) ?? c.thinking;
}

export function countersToIR(c: AnthropicCounters): IRUsage {
  return {
    inputTokens: c.input + c.cacheRead + c.cacheWrite,
    cachedInputTokens: c.cacheRead,
    cacheWriteTokens: c.cacheWrite,
    outputTokens: c.output,
    reasoningTokens: c.thinking,
  };
}

export function countersFromIR(u: IRUsage): AnthropicCounters {
  return {
    input: Math.max(0, u.inputTokens - u.cachedInputTokens - u.cacheWriteTokens),
    cacheRead: u.cachedInputTokens,
    cacheWrite: u.cacheWriteTokens,
    output: u.outputTokens,
    thinking: u.reasoningTokens,
  };
}

/** The usage object a Messages caller sees (message_delta and non-streamed body). */
export function anthropicUsage(u: IRUsage): Record<string, number> {
  const c = countersFromIR(u);
  return {
    input_tokens: c.input,
    output_tokens: c.output,
    cache_creation_input_tokens: c.cacheWrite,
    cache_read_input_tokens: c.cacheRead,
  };
}

/** Anthropic has no flex tier of its own; the gateway's simulator and spec report "flex" here. */
export const tierFromAnthropic = (serviceTier: unknown): Tier => (serviceTier === 'flex' ? 'flex' : 'standard');
