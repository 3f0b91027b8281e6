// Thinking budget per reasoning effort, for a provider that takes a token budget where the caller
// gave an effort (Anthropic's thinking, Gemini 2.5's thinkingBudget). Each lands back in its own
// band when decoded (<2048 low, <8192 medium, else high); 1024 is Anthropic's minimum.
export const EFFORT_BUDGET = { minimal: 1024, low: 1024, medium: 4096, high: 16384 } as const;
