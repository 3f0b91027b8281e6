// What the spec's usage frame carries when the caller asked include_cost: usage.cost (only when
// the request could be priced) and usage.routing, plus usage.input_tokens / output_tokens for
// formats whose own token fields have other names. One place for every format and the responder.
import type { CostExtras } from '../ir.ts';

export function addCostExtras(
  usage: Record<string, unknown>, extras: CostExtras, tokens?: { input: number; output: number },
): Record<string, unknown> {
  if (tokens) { usage.input_tokens = tokens.input; usage.output_tokens = tokens.output; }
  if (extras.cost !== undefined) usage.cost = extras.cost;
  usage.routing = extras.routing;
  return usage;
}
