// Anthropic usage ⇄ IR usage. Anthropic's input_tokens excludes cache reads and writes (the IR's
// inputTokens includes them), and every counter is a cumulative total: a later frame overwrites.
// cache_creation_input_tokens is every cache write; cache_creation splits it by lifetime (5 minutes,
// 1 hour), and the 1-hour part costs more. message_start carries the split, message_delta only the
// total, so the split a later frame does not restate is kept.
import type { IRUsage } from '../../ir.ts';
import type { Tier } from '../../routes.ts';

/** The four counters as Anthropic reports them, the 1-hour part of the cache writes, plus thinking
 *  tokens when the wire has them. */
export interface AnthropicCounters {
  input: number; cacheRead: number; cacheWrite: number; cacheWrite1h: number; output: number; thinking: number;
}

export const zeroCounters = (): AnthropicCounters => ({ input: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0, output: 0, thinking: 0 });

const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** Overwrite the counters a usage object carries; absent or null fields keep their value. */
export function mergeAnthropicUsage(counters: AnthropicCounters, wire: any): void {
  if (!wire || typeof wire !== 'object') return;
  counters.input = num(wire.input_tokens) ?? counters.input;
  counters.cacheRead = num(wire.cache_read_input_tokens) ?? counters.cacheRead;
  counters.cacheWrite = num(wire.cache_creation_input_tokens) ?? counters.cacheWrite;
  counters.cacheWrite1h = num(wire.cache_creation?.ephemeral_1h_input_tokens) ?? counters.cacheWrite1h;
  counters.output = num(wire.output_tokens) ?? counters.output;
  counters.thinking = num(wire.output_tokens_details?.thinking_tokens) ?? counters.thinking;
}

export function countersToIR(counters: AnthropicCounters): IRUsage {
  const usage: IRUsage = {
    inputTokens: counters.input + counters.cacheRead + counters.cacheWrite,
    cachedInputTokens: counters.cacheRead,
    cacheWriteTokens: counters.cacheWrite,
    outputTokens: counters.output,
    reasoningTokens: counters.thinking,
  };
  // Only when there are some: the IR of every other wire has no such field.
  if (counters.cacheWrite1h) usage.cacheWrite1hTokens = counters.cacheWrite1h;
  return usage;
}

export function countersFromIR(usage: IRUsage): AnthropicCounters {
  return {
    input: Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens),
    cacheRead: usage.cachedInputTokens,
    cacheWrite: usage.cacheWriteTokens,
    cacheWrite1h: usage.cacheWrite1hTokens ?? 0,
    output: usage.outputTokens,
    thinking: usage.reasoningTokens,
  };
}

/** The usage object a Messages caller sees (message_delta and non-streamed body). */
export function anthropicUsage(usage: IRUsage): Record<string, number> {
  const counters = countersFromIR(usage);
  return {
    input_tokens: counters.input,
    output_tokens: counters.output,
    cache_creation_input_tokens: counters.cacheWrite,
    cache_read_input_tokens: counters.cacheRead,
  };
}

/** Anthropic has no flex tier of its own; the gateway's simulator and spec report "flex" here. A
 *  message that names no service_tier (Bedrock, compatible servers) says nothing: undefined, and
 *  the committed tier stands. */
export const tierFromAnthropic = (serviceTier: unknown): Tier | undefined =>
  typeof serviceTier === 'string' && serviceTier ? (serviceTier === 'flex' ? 'flex' : 'standard') : undefined;
