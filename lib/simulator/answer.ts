// The simulated model: from a decoded prompt and the directive, decide what it says — optional
// reasoning, then either text or one tool call — and the usage that goes with it. Route encoders
// only reshape an Answer into their wire format.
import { Rng, hash32, BASE64_ALPHABET, ID_ALPHABET } from './rng.ts';
import { generateTokens, listedTokens, type Tokens } from './words.ts';
import { argsForSchema, valueForSchema } from './schema-args.ts';
import { DEFAULT_REASONING_TOKENS, type Prompt } from './prompt.ts';
import type { Directive } from './directive.ts';

export type StopKind = 'end' | 'max_tokens' | 'tool_use';

export interface ToolCallAnswer {
  name: string;
  /** JSON text of the arguments and the same split into 2+ stream fragments. */
  args: string;
  fragments: string[];
}

export interface Answer {
  model: string;
  /** Unique per request (seeded sequence): encoders build their ids from it. */
  uid: string;
  created: number;
  /** Token runs are generated as they are read (see Tokens), never held whole. */
  reasoning?: { tokens: Tokens; signature: string };
  text?: { tokens: Tokens };
  toolCall?: ToolCallAnswer;
  stop: StopKind;
  usage: {
    input: number;
    /** Everything generated, reasoning included (OpenAI convention). */
    output: number;
    reasoning: number;
  };
}

export interface ComposeInput {
  prompt: Prompt;
  directive: Directive | undefined;
  seed: number;
  uid: string;
  defaultOutputTokens: number;
}

export function composeAnswer({ prompt, directive, seed, uid, defaultOutputTokens }: ComposeInput): Answer {
  const rng = new Rng(hash32(prompt.text, seed));
  const input = Math.max(1, Math.ceil(prompt.text.length / 4));
  const budget = prompt.maxOutputTokens ?? Infinity;

  let reasoningCount = 0;
  let reasoning: Answer['reasoning'];
  if (prompt.reasoning) {
    const wanted = directive?.reasoning_tokens ?? prompt.reasoningTokens ?? DEFAULT_REASONING_TOKENS;
    reasoningCount = Math.min(wanted, budget);
    const tokens = generateTokens(rng, reasoningCount);
    reasoning = { tokens, signature: rng.chars(96, BASE64_ALPHABET) };
  }

  const toolName = pickTool(prompt, directive);
  if (toolName !== undefined) {
    const schema = prompt.tools.find((t) => t.name === toolName)?.parameters;
    const args = JSON.stringify(directive?.tool_args ?? argsForSchema(schema, rng));
    const argTokens = Math.max(1, Math.ceil(args.length / 4));
    return {
      model: prompt.model, uid, created: Math.floor(Date.now() / 1000), reasoning,
      toolCall: { name: toolName, args, fragments: splitFragments(args) },
      stop: 'tool_use',
      usage: { input, output: reasoningCount + argTokens, reasoning: reasoningCount },
    };
  }

  if (prompt.jsonOutput) {
    // Structured output: the whole answer is JSON valid against the schema, never truncated into
    // invalid JSON (a budget too small for it still gets it, as the providers' grammars do).
    const schema = prompt.jsonOutput.schema;
    const json = JSON.stringify(schema === undefined ? { answer: generateTokens(rng, 3).text().trim() } : valueForSchema(schema, rng));
    return {
      model: prompt.model, uid, created: Math.floor(Date.now() / 1000), reasoning,
      text: { tokens: listedTokens(splitFragments(json)) }, stop: 'end',
      usage: { input, output: reasoningCount + Math.max(1, Math.ceil(json.length / 4)), reasoning: reasoningCount },
    };
  }

  const wantedText = directive?.output_tokens ?? defaultOutputTokens;
  const textCount = Math.max(0, Math.min(wantedText, budget - reasoningCount));
  const truncated = reasoningCount + wantedText > budget;
  return {
    model: prompt.model, uid, created: Math.floor(Date.now() / 1000), reasoning,
    text: textCount > 0 ? { tokens: generateTokens(rng, textCount) } : undefined,
    stop: truncated ? 'max_tokens' : 'end',
    usage: { input, output: reasoningCount + textCount, reasoning: reasoningCount },
  };
}

/** The tool to call, or undefined for a text answer. A tool result in the last turn gets text. */
function pickTool(prompt: Prompt, directive: Directive | undefined): string | undefined {
  if (prompt.lastTurnIsToolResult) return undefined;
  if (directive?.tool_call) return directive.tool_call;
  if (prompt.forcedTool === undefined || prompt.tools.length === 0) return undefined;
  return prompt.forcedTool === true ? prompt.tools[0]!.name : prompt.forcedTool;
}

/** 2..8 roughly equal fragments, split by code point so no fragment holds half a character. */
function splitFragments(text: string): string[] {
  const chars = Array.from(text);
  const n = Math.max(2, Math.min(8, Math.ceil(chars.length / 10)));
  const size = Math.ceil(chars.length / n);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  while (out.length < 2) out.push('');
  return out;
}

/** A per-request unique id base from the server's seeded sequence. */
export function nextUid(rng: Rng): string {
  return rng.chars(24, ID_ALPHABET);
}
