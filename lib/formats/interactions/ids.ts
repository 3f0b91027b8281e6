// Ids and tool-argument parsing shared by the Interactions encoders.
import { randomBytes } from 'node:crypto';

export const newInteractionId = (): string => `v1_${randomBytes(18).toString('base64url')}`;

/** IR tool arguments (JSON text) → the object a function_call step carries; undefined when the
 *  text is not JSON (a call cut off by max_tokens). A non-object value is wrapped. */
export function argumentsObject(args: string): Record<string, unknown> | undefined {
  if (!args.trim()) return {};
  let parsed: unknown;
  try { parsed = JSON.parse(args); } catch { return undefined; }
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed as Record<string, unknown> : { value: parsed };
}
