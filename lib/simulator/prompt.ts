// What every route decoder extracts from a request body: the few facts the simulated model needs,
// whatever the wire format. Decoders live next to their route; the answer is composed from this.
import type { Tier } from '../routes.ts';
import type { JsonOutput } from './structured-output.ts';
import { lookupTable } from '../formats/lookup-table.ts';

export interface PromptTool { name: string; parameters: unknown }

export interface Prompt {
  model: string;
  /** All request text (system, messages, tool calls and results): sizes input tokens, seeds output. */
  text: string;
  /** The last user-authored text: where a `#sim{...}` directive lives. */
  lastUserText: string;
  maxOutputTokens?: number;
  /** Reasoning was asked for; `reasoningTokens` is the format's effort mapped to a token count. */
  reasoning: boolean;
  reasoningTokens?: number;
  tools: PromptTool[];
  /** The request forces a tool call: a name, or true for "any tool" (the first). */
  forcedTool?: string | true;
  /** The last turn carries a tool result: the model answers it with text. */
  lastTurnIsToolResult: boolean;
  /** Structured output asked (the format's JSON schema field); the text answer is JSON valid against it. */
  jsonOutput?: JsonOutput;
}

/** A decoded request: the prompt plus the wire-level facts the server acts on. */
export interface Decoded {
  prompt: Prompt;
  stream: boolean;
  tier: Tier;
  /** Route-specific request fields the encoder echoes (e.g. Responses `service_tier`, Chat include_usage). */
  echo: Record<string, unknown>;
}

export type DecodeResult = { ok: true; value: Decoded } | { ok: false; status: number; message: string };

export const invalid = (message: string, status = 400): DecodeResult => ({ ok: false, status, message });

/** Reasoning token counts per effort / thinking level (one word = one token). */
export const REASONING_TOKENS: Readonly<Record<string, number>> = lookupTable({
  minimal: 4, low: 8, medium: 16, high: 32, xhigh: 48, max: 48,
});
export const DEFAULT_REASONING_TOKENS = 16;

// Small readers shared by the decoders: request bodies are untrusted JSON.
export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const asString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const asPositiveInt = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;

/** Text of a content value that is a string or an array of `{type:'text'|'input_text'|…, text}` parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  let out = '';
  for (const part of asArray(content)) {
    if (typeof part === 'string') out += part;
    else if (isRecord(part) && typeof part.text === 'string') out += part.text;
  }
  return out;
}
