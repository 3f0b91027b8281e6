// Anthropic extended thinking for a body translated from another format: the budget an effort
// stands for, the requests Anthropic refuses thinking on (it is left out of those rather than
// sent to be rejected), and the max_tokens a body without one needs beside its budget.
import type { IRRequest } from '../../ir.ts';
import { EFFORT_BUDGET } from '../effort-budget.ts';

type Block = Record<string, any>;

const MIN_BUDGET = 1024;

/** The `thinking` member for a translated body, or undefined to send none. Anthropic refuses
 *  manual thinking with a forced tool choice (`any`, a named tool), and a request whose last
 *  assistant turn calls tools without starting with its thinking block ("Expected thinking or
 *  redacted_thinking"): a caller whose format cannot keep Anthropic's signed thinking (Chat) never
 *  has one. budget_tokens must stay below the caller's max_tokens; without room for the minimum
 *  thinking is left out. A body without max_tokens gets one above the budget (maxTokensFor). */
export function encodeThinking(ir: IRRequest, messages: Block[], toolChoice: Block | undefined): Block | undefined {
  if (!ir.reasoning) return undefined;
  if (toolChoice?.type === 'any' || toolChoice?.type === 'tool') return undefined;
  if (!lastToolTurnSigned(messages)) return undefined;
  let budget: number = ir.reasoning.budgetTokens ?? EFFORT_BUDGET[ir.reasoning.effort];
  if (ir.maxOutputTokens !== undefined && budget >= ir.maxOutputTokens) budget = ir.maxOutputTokens - 1;
  if (budget < MIN_BUDGET) return undefined;
  return { type: 'enabled', budget_tokens: budget };
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
 *  inside max_tokens and must be below it. */
export function maxTokensFor(body: Record<string, any>, cap: number): number {
  const budget = body.thinking?.type === 'enabled' ? body.thinking.budget_tokens : undefined;
  return typeof budget === 'number' ? cap + budget : cap;
}
