// IR tool arguments (JSON text) as the object the formats whose tool calls carry an object need
// (Anthropic's tool_use.input, a Gemini function_call step's arguments).

/** The arguments object; undefined when the text is not JSON (a call cut off by max_tokens).
 *  A non-object value is wrapped. */
export function argumentsObject(args: string): Record<string, unknown> | undefined {
  if (!args.trim()) return {};
  let parsed: unknown;
  try { parsed = JSON.parse(args); } catch { return undefined; }
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed as Record<string, unknown> : { value: parsed };
}
