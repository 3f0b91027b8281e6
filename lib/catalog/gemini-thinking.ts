// How a Gemini model takes the amount of thinking, by generation. Google: "thinking levels
// (Gemini 3 and later models) or thinking budgets (Gemini 2.5 models)". Vertex refuses a level on
// 2.5 ("Thinking level is not supported for this model."), a budget outside the model's range
// ("thinking_budget is out of range"), and any thinking config on 2.0 and earlier ("thinking is
// not supported by this model"). Gemini 3 still takes a budget (kept for compatibility).
//
// Read from the model id: the request encoders see the IR's model (the catalog id), not its entry.
// An id naming no generation (a config file's own model) is taken as current: levels.

export type GeminiThinking =
  | { by: 'level' }
  | { by: 'budget'; maxBudget: number }
  | { by: 'none' };

const GENERATION = /^gemini-(\d+)(?:\.(\d+))?/;
/** Gemini 2.5's thinkingBudget ceilings: Pro 32768, Flash and Flash-Lite 24576. */
const MAX_BUDGET_PRO = 32_768;
const MAX_BUDGET = 24_576;

export function geminiThinking(model: string): GeminiThinking {
  const generation = GENERATION.exec(model);
  if (!generation) return { by: 'level' };
  const major = Number(generation[1]);
  const minor = Number(generation[2] ?? 0);
  if (major >= 3) return { by: 'level' };
  if (major === 2 && minor >= 5) return { by: 'budget', maxBudget: /-pro\b/.test(model) ? MAX_BUDGET_PRO : MAX_BUDGET };
  return { by: 'none' };
}
