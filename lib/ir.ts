// The one internal representation every caller format and provider wire format translates through
// (N formats need 2N codecs, not N² translators). Decoders turn a format into these shapes; encoders
// turn them back out.
//
// Token conventions (normalised by every decoder, whatever the wire said):
// - inputTokens counts the whole prompt, cache reads and writes included (OpenAI's convention;
//   Anthropic's input_tokens excludes them, so its decoder adds them back).
// - outputTokens counts everything generated, reasoning included (OpenAI's convention; Gemini's
//   total_output_tokens excludes thought tokens, so its decoder adds total_thought_tokens).
// - inputTokens includes Gemini's tool-use prompt tokens, which Gemini counts outside its prompt
//   count; toolUseTokens says how many, for the encoders whose format counts them apart.

import type { RouteName, Tier } from './routes.ts';

/** Wire formats: the four caller formats plus Vertex generateContent (cloud_a's wire). */
export type FormatName = 'responses' | 'chat' | 'messages' | 'interactions' | 'vertex';

/** Two safety outcomes a caller's SDK tells apart: `refusal`, the model declined and said so (its
 *  words are text blocks marked `refusal`: OpenAI's refusal field and content part);
 *  `content_filter`, the provider's filter cut or withheld the answer (Chat content_filter,
 *  Responses incomplete content_filter, Gemini SAFETY…, Anthropic stop_reason refusal). */
export type IRStopReason = 'end' | 'max_tokens' | 'tool_use' | 'refusal' | 'content_filter' | 'error';

export interface IRUsage {
  inputTokens: number;
  cachedInputTokens: number;   // subset of inputTokens read from cache
  cacheWriteTokens: number;    // subset of inputTokens written to cache
  /** Subset of cacheWriteTokens written for Anthropic's 1-hour cache (priced apart); absent: none. */
  cacheWrite1hTokens?: number;
  /** Subset of inputTokens that Gemini counts apart as tool-use prompt tokens (tool results it fed
   *  back to the model): priced and counted as input everywhere, written apart only where the
   *  caller's format has a field for it (Interactions, Vertex). Absent: none. */
  toolUseTokens?: number;
  outputTokens: number;
  reasoningTokens: number;     // subset of outputTokens
}

export const zeroUsage = (): IRUsage => ({
  inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0, reasoningTokens: 0,
});

// ---------- requests ----------

export type IRPart =
  | { type: 'text'; text: string }
  /** detail: OpenAI's image detail ('low', 'high', 'original'), absent for 'auto'; only OpenAI wires
   *  take it (the Chat endpoint refuses it on other models). */
  | { type: 'image'; mediaType?: string; data?: string /* base64 */; url?: string; detail?: string }
  | { type: 'file'; mediaType?: string; data?: string /* base64 */; url?: string; filename?: string }
  /** Reasoning replayed from an earlier turn. signature = Anthropic thinking signature or Gemini
   *  thought_signature; encrypted = OpenAI encrypted_content. Opaque: carried, never interpreted
   *  (a caller's format that carries another vendor's value tags it: formats/reasoning-tags.ts).
   *  anthropic: the signature is known to be Anthropic's (a Messages caller's, or a Responses or
   *  Interactions caller's tagged value); the Messages encoder sends only these, the Gemini
   *  encoders leave them out. */
  | { type: 'reasoning'; text?: string; signature?: string; encrypted?: string; id?: string; anthropic?: true }
  | { type: 'tool_call'; id: string; name: string; arguments: string /* JSON text */; signature?: string }
  | { type: 'tool_result'; callId: string; name?: string; content: string; isError?: boolean };

export interface IRMessage {
  /** Tool results travel as parts of a 'user' message (Chat's role:"tool" decodes to this). */
  role: 'user' | 'assistant';
  content: IRPart[];
}

export interface IRToolDef {
  name: string;
  description?: string;
  parameters: Record<string, unknown>; // JSON Schema
  strict?: boolean;
}

export type IRToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type IRResponseFormat =
  | { type: 'json_schema'; name?: string; description?: string; schema: Record<string, unknown>; strict?: boolean }
  | { type: 'json_object' };

export interface IRRequest {
  model: string;
  system?: string;
  messages: IRMessage[];
  tools?: IRToolDef[];
  toolChoice?: IRToolChoice;
  maxOutputTokens?: number;      // forwarded only when the caller set it; never synthesised
  temperature?: number;
  topP?: number;
  reasoning?: { effort: 'minimal' | 'low' | 'medium' | 'high'; budgetTokens?: number };
  responseFormat?: IRResponseFormat;
  stopSequences?: string[];
  /** false: at most one tool call per turn (OpenAI parallel_tool_calls, Anthropic
   *  tool_choice.disable_parallel_tool_use); absent: the provider's default. Gemini has no switch. */
  parallelToolCalls?: boolean;
  stream: boolean;
  /** Fields only the caller's own family understands (e.g. Messages top_k, Interactions
   *  generation_config extras). Encoders of that same family copy them; others ignore them
   *  (the validator refuses them before a request for another family gets this far), except
   *  that the Responses encoder translates a Chat caller's (openai-shared.ts): a Chat caller on
   *  vendor A rides the Responses wire. */
  native?: { family: FormatName; fields: Record<string, unknown> };
}

// ---------- responses and stream events ----------

export type IRBlock =
  | { kind: 'text'; text: string; refusal?: true }
  /** anthropic: the signature is an Anthropic thinking signature (a Responses caller keeps it in
   *  encrypted_content; Gemini's have no field there). */
  | { kind: 'reasoning'; text: string; signature?: string; encrypted?: string; anthropic?: true }
  | { kind: 'tool_call'; id: string; name: string; arguments: string; signature?: string };

export type IRBlockStart =
  | { kind: 'text'; refusal?: true }
  | { kind: 'reasoning' }
  | { kind: 'tool_call'; id: string; name: string };

/** What the gateway adds to a usage frame when the caller asked include_cost. */
export interface CostBlock { total_micro_usd: number; currency: 'USD' }
export interface RoutingBlock {
  provider: RouteName; requested_provider: RouteName; tier: Tier; reason: string;
  fallback_attempts: number; mode: 'byok' | 'managed';
}
export interface CostExtras { cost?: CostBlock; routing: RoutingBlock }

export type IREvent =
  | { type: 'start'; id?: string; model?: string }
  | { type: 'block_start'; index: number; block: IRBlockStart }
  | { type: 'text_delta'; index: number; text: string }
  | { type: 'reasoning_delta'; index: number; text: string }
  /** Anthropic signature_delta (anthropic: true), Gemini thought_signature, OpenAI
   *  encrypted_content (encrypted: true; on a reasoning block), or a Gemini thoughtSignature on a
   *  function call block. */
  | { type: 'signature'; index: number; signature: string; encrypted?: boolean; anthropic?: true }
  | { type: 'args_delta'; index: number; json: string }
  | { type: 'block_stop'; index: number }
  /** Usage seen mid-stream (Anthropic message_start); later values overwrite earlier ones. */
  | { type: 'usage'; usage: Partial<IRUsage> }
  /** The end. usage is final; tier is what the provider says served; extras is set by the
   *  gateway (never by a decoder) when the caller asked include_cost. unreported: the answer
   *  completed but the provider's final usage never came (a Chat stream without its usage chunk,
   *  a Gemini chunk with a finishReason and no counts): usage is only what it reported before (a
   *  floor, zeros for most wires), and the gateway charges the estimate (lib/http/pipeline.ts
   *  unpricedUsage). Usage reported as zeros is reported. */
  | { type: 'finish'; reason: IRStopReason; usage: IRUsage; tier?: Tier; extras?: CostExtras; unreported?: true }
  | { type: 'error'; code: string; message: string };

export interface IRResponse {
  id: string;
  model: string;
  blocks: IRBlock[];
  stopReason: IRStopReason;
  usage: IRUsage;
  /** The provider's answer carried no usage (the finish event's `unreported`): usage is zeros or a
   *  floor, not what it bills. */
  unreported?: true;
  /** The tier the provider says served; undefined when it names none (the committed tier stands). */
  tier?: Tier;
  extras?: CostExtras;
  error?: { code: string; message: string };
}
