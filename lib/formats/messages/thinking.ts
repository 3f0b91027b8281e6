// Anthropic extended thinking for a body translated from another format: the form the model takes
// (catalog/claude-thinking.ts: adaptive with an effort, or a budget an effort stands for), the
// requests Anthropic refuses thinking on (it is left out of those rather than sent to be
// rejected), the sampling parameters it refuses beside thinking, and the max_tokens a body without
// one needs beside its budget.
import type { IRRequest } from '../../ir.ts';
import { clampEffort, EFFORT_BUDGET, requestedEffort } from '../effort-budget.ts';
import { claudeThinking } from '../../catalog/claude-thinking.ts';

type Block = Record<string, any>;

const MIN_BUDGET = 1024;

/** The `thinking` member for a translated body, and the output_config.effort beside adaptive
 *  thinking, or undefined to send none. An adaptive-only model (Opus 4.7 and later) gets
 *  `{type: 'adaptive', display: 'summarized'}`: its default display omits the thinking text,
 *  which a caller that asked reasoning reads; the effort is the caller's, held to the model's
 *  levels (minimal → low; xhigh and max as asked). A caller's own budget has no adaptive form: its
 *  effort band stands for it. Anthropic refuses
 *  manual thinking with a forced tool choice (`any`, a named tool), and a request whose last
 *  assistant turn calls tools without starting with its thinking block ("Expected thinking or
 *  redacted_thinking"): a caller whose format cannot keep Anthropic's signed thinking (Chat) never
 *  has one. budget_tokens must stay below the caller's max_tokens; without room for the minimum
 *  thinking is left out. A body without max_tokens gets one above the budget (maxTokensFor). */
export function encodeThinking(
  ir: IRRequest, messages: Block[], toolChoice: Block | undefined,
): { thinking: Block; effort?: string } | undefined {
  const effort = requestedEffort(ir);
  if (!effort) return undefined;
  if (toolChoice?.type === 'any' || toolChoice?.type === 'tool') return undefined;
  if (!lastToolTurnSigned(messages)) return undefined;
  const model = claudeThinking(ir.model);
  if (model.by === 'adaptive') return { thinking: { type: 'adaptive', display: 'summarized' }, effort: clampEffort(effort, model.efforts) };
  let budget: number = ir.reasoning?.budgetTokens ?? EFFORT_BUDGET[effort];
  if (ir.maxOutputTokens !== undefined && budget >= ir.maxOutputTokens) budget = ir.maxOutputTokens - 1;
  if (budget < MIN_BUDGET) return undefined;
  return { thinking: { type: 'enabled', budget_tokens: budget } };
}

/** temperature and top_p as a translated body may send them. Opus 4.7 and later refuse every
 *  sampling parameter ("temperature is deprecated for this model"); beside thinking Anthropic takes
 *  temperature 1 only and top_p from 0.95 to 1 ("Thinking isn't compatible with temperature, top_p,
 *  or top_k modifications"). The caller asked for both; the reasoning is kept and the sampling
 *  value it cannot have is dropped (docs/decisions.md, "Sampling beside Anthropic thinking"). */
export function encodeSampling(ir: IRRequest, thinking: boolean): { temperature?: number; top_p?: number } {
  if (claudeThinking(ir.model).by === 'adaptive') return {};
  const out: { temperature?: number; top_p?: number } = {};
  if (ir.temperature !== undefined && (!thinking || ir.temperature === 1)) out.temperature = ir.temperature;
  if (ir.topP !== undefined && (!thinking || ir.topP >= 0.95)) out.top_p = ir.topP;
  return out;
}

/** False when the last assistant turn has a tool_use and does not start with (signed) thinking. */
function lastToolTurnSigned(messages: Block[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    const first = message.content[0]?.type;
    return first === 'thinking' || first === 'redacted_thinking' || !message.content.some((block: Block) => block.type === 'tool_use');
  }
  return true;
}

/** The max_tokens an Anthropic body without one is sent with (the route adapters call it): the
 *  configured output cap, plus the thinking budget when thinking is on, since budget_tokens counts
 *  inside max_tokens and must be below it. Adaptive thinking counts inside max_tokens too: it gets
 *  the room its effort's budget would have (a Chat caller's `high` on Opus as on Sonnet). */
export function maxTokensFor(body: Record<string, any>, cap: number): number {
  const thinking = body.thinking?.type;
  const effort = body.output_config?.effort as keyof typeof EFFORT_BUDGET | undefined;
  const budget = thinking === 'enabled' ? body.thinking.budget_tokens
    : thinking === 'adaptive' ? EFFORT_BUDGET[effort && Object.hasOwn(EFFORT_BUDGET, effort) ? effort : 'high'] : undefined;
  return typeof budget === 'number' ? cap + budget : cap;
}
