// How a Gemini model takes the amount of thinking, by generation. Google: "thinking levels
// (Gemini 3 and later models) or thinking budgets (Gemini 2.5 models)". Vertex refuses a level on
// 2.5 ("Thinking level is not supported for this model."), a budget outside the model's range
// ("thinking_budget is out of range"), and any thinking config on 2.0 and earlier ("thinking is
// not supported by this model"). Gemini 3 still takes a budget (kept for compatibility).
//
// Levels differ by model: Gemini 3 Flash (to 3.5) takes minimal, low, medium and high; Pro and
// Flash from 3.7 refuse minimal ("Thinking level MINIMAL is not supported for this model.") and
// take low, medium and high. `levels` are those a translated effort is held to (effort-budget.ts
// clampEffort); on 2.5 they are what the Interactions API's thinking_level takes.
//
// Read from the model id: the request encoders see the IR's model (the catalog id), not its entry.
// An id naming no generation (a config file's own model) is taken as current: levels, those every
// current model takes.
import type { Effort } from '../formats/effort-budget.ts';

export type GeminiThinking =
  | { by: 'level'; levels: readonly Effort[] }
  | { by: 'budget'; maxBudget: number; levels: readonly Effort[] }
  | { by: 'none' };

const GENERATION = /^gemini-(\d+)(?:\.(\d+))?/;
/** Gemini 2.5's thinkingBudget ceilings: Pro 32768, Flash and Flash-Lite 24576. */
const MAX_BUDGET_PRO = 32_768;
const MAX_BUDGET = 24_576;
const ALL_LEVELS: readonly Effort[] = ['minimal', 'low', 'medium', 'high'];
const NO_MINIMAL: readonly Effort[] = ['low', 'medium', 'high'];

export function geminiThinking(model: string): GeminiThinking {
  const generation = GENERATION.exec(model);
  if (!generation) return { by: 'level', levels: NO_MINIMAL };
  const major = Number(generation[1]);
  const minor = Number(generation[2] ?? 0);
  const pro = /-pro\b/.test(model);
  if (major >= 3) return { by: 'level', levels: pro || major > 3 || minor >= 7 ? NO_MINIMAL : ALL_LEVELS };
  if (major === 2 && minor >= 5) return { by: 'budget', maxBudget: pro ? MAX_BUDGET_PRO : MAX_BUDGET, levels: ALL_LEVELS };
  return { by: 'none' };
}
