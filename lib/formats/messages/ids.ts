// Ids and tool-argument parsing shared by the Messages encoders.
import { randomBytes } from 'node:crypto';

export const newMessageId = (): string => `msg_${randomBytes(12).toString('hex')}`;

/** IR tool arguments (JSON text) → the object Anthropic's tool_use.input needs; undefined when
 *  the text is not JSON (a call cut off by max_tokens). A non-object value is wrapped. */
export function toolInput(args: string): Record<string, unknown> | undefined {
  if (!args.trim()) return {};
  let parsed: unknown;
  try { parsed = JSON.parse(args); } catch { return undefined; }
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
    ? parsed as Record<string, unknown>
    : { value: parsed };
}
