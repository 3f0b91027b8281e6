// Tool names and call ids as each provider wire takes them. Names are the caller's contract with
// its own code (the model calls them back by name), so one a target wire refuses is refused here,
// before anything is sent, not renamed. Call ids in history only pair calls with results inside
// one request: one Anthropic refuses is rewritten the same way on both sides.
import { createHash } from 'node:crypto';
import { GatewayError } from '../errors.ts';
import type { IRToolDef } from '../ir.ts';

export interface ToolNameRule { pattern: RegExp; says: string }

/** The function names each provider accepts (400 otherwise), as their SDK types and errors state
 *  them. Anthropic's API answers `^[a-zA-Z0-9_-]{1,128}$` (older docs said 64). */
export const TOOL_NAME_RULES = {
  openai: { pattern: /^[a-zA-Z0-9_-]{1,64}$/, says: 'letters, digits, _ and -, at most 64 characters' },
  anthropic: { pattern: /^[a-zA-Z0-9_-]{1,128}$/, says: 'letters, digits, _ and -, at most 128 characters' },
  gemini: {
    pattern: /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/,
    says: 'a letter or _ first, then letters, digits, _ . : and -, at most 128 characters',
  },
} satisfies Record<string, ToolNameRule>;

/** Refuses the first tool whose name `rule` does not take. `wire` names the target for the
 *  message; the index counts function tools (the caller's own index when no hosted tool comes
 *  first, as on every route that speaks another format). */
export function refuseToolNames(tools: IRToolDef[] | undefined, rule: ToolNameRule, wire: string): void {
  const i = tools?.findIndex((tool) => !rule.pattern.test(tool.name)) ?? -1;
  if (i < 0) return;
  throw new GatewayError(
    'unsupported_parameter',
    `tools[${i}].name cannot be sent to ${wire}, whose tool names are ${rule.says}; rename the tool or leave the routes `
    + `speaking ${wire} out of provider.`,
    { param: `tools[${i}].name` },
  );
}

const ANTHROPIC_ID = /^[a-zA-Z0-9_-]+$/;

/** A call id Anthropic takes (tool_use.id and tool_result.tool_use_id match ^[a-zA-Z0-9_-]+$):
 *  an id that fits goes as it is; any other (Kimi's `functions.get_weather:0`, dotted, spaced,
 *  empty) has every other character made `_` and a short hash of the original added, so two ids
 *  that differ only in those characters stay two ids. Deterministic, so a call and its result
 *  rewritten apart still pair; nothing maps back, as only requests carry history ids. */
export function anthropicCallId(id: string): string {
  if (ANTHROPIC_ID.test(id)) return id;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 10);
  return `${id.replace(/[^a-zA-Z0-9_-]/g, '_')}_${hash}`;
}
