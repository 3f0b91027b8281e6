// Reasoning effort: the levels callers name, what a level becomes for a provider that takes
// another (a token budget, a narrower set of levels), and the OpenAI-only levels above `high`.
import type { IRRequest } from '../ir.ts';

/** Every level a caller can name, lowest first ('none' is OpenAI's "no reasoning"). */
export type Effort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';
const ORDER: readonly Effort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

// Thinking budget per reasoning effort, for a provider that takes a token budget where the caller
// gave an effort (Anthropic's thinking, Gemini 2.5's thinkingBudget). Each lands back in its own
// band when decoded (<2048 low, <8192 medium, else high); 1024 is Anthropic's minimum. xhigh and
// max, which no budget model names, take high's.
export const EFFORT_BUDGET = { minimal: 1024, low: 1024, medium: 4096, high: 16384, xhigh: 16384, max: 16384 } as const;

/** The effort a translated request asks for: the IR's, or xhigh/max, which the IR has no level for
 *  and the Chat and Responses decoders keep in native.fields for OpenAI (a Chat caller's
 *  reasoning_effort, a Responses caller's reasoning.effort). Undefined: no reasoning asked
 *  ('none' included). */
export function requestedEffort(ir: IRRequest): Exclude<Effort, 'none'> | undefined {
  if (ir.reasoning) return ir.reasoning.effort;
  const fields = ir.native?.fields;
  const effort = ir.native?.family === 'chat' ? fields?.reasoning_effort
    : ir.native?.family === 'responses' ? (fields?.reasoning as { effort?: unknown } | undefined)?.effort
    : undefined;
  return effort === 'xhigh' || effort === 'max' ? effort : undefined;
}

/** `effort` held to the levels a model takes: the highest taken at or below it, else the lowest
 *  taken (`minimal` → `low` where minimal is refused; `max` → `high` where high is the top). */
export function clampEffort<E extends Effort>(effort: Effort, taken: readonly E[]): E {
  if ((taken as readonly Effort[]).includes(effort)) return effort as E;
  const rank = ORDER.indexOf(effort);
  const below = taken.filter((level) => level !== 'none' && ORDER.indexOf(level) <= rank);
  return below.length ? below.at(-1)! : taken.find((level) => level !== 'none') ?? taken[0]!;
}
