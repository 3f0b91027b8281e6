// The `#sim{...}` directive: a JSON object a test writes into the last user text to steer one
// request (delays, refusals, injected failures, resets, tool calls, replays). Parsed by scanning
// for the balanced closing brace (string-aware) so the JSON may nest.

export interface Directive {
  /** Flex start delay for this request (overrides the seeded draw). */
  flex_start_ms?: number;
  /** true → the flex queue refuses with the route's capacity error (overrides refuseRate). */
  flex_refuse?: boolean;
  /** Standard-tier time to first event. */
  standard_start_ms?: number;
  /** Text length in tokens (one word = one token). */
  output_tokens?: number;
  /** Reasoning length when the request asked for reasoning (default from effort/level, else 16). */
  reasoning_tokens?: number;
  /** Output pacing; 0 = none. */
  tokens_per_s?: number;
  /** HTTP statuses for attempts 1, 2, … of requests with the same `id`; later attempts succeed. */
  fail?: number[];
  /** Retry-After (seconds) on injected 429/503/529 and flex refusals. */
  retry_after_s?: number;
  /** Reset the TCP connection after streaming this many tokens. */
  reset_after_tokens?: number;
  /** Send the format's own in-stream error after this many tokens, then end the body. */
  error_after_tokens?: number;
  /** Key for `fail` counting, shared across routes and tiers. */
  id?: string;
  /** Answer with one call to this tool (arguments generated from its schema). */
  tool_call?: string;
  /** The arguments of that call, as given (instead of generated): a client that runs the tool gets
   *  arguments it can act on (e.g. a shell command). */
  tool_args?: Record<string, unknown>;
  /** A file under fixturesDir to send back instead of generated output. */
  replay?: string;
}

const MARK = '#sim{';
/** What a caller may ask for: any caller can write a directive (the simulator runs inside the
 *  gateway on `make run`), so each number is bounded — an answer of 20,000,000 tokens once took
 *  the heap down. Past a bound the directive is refused (400), like a malformed one. */
export const DIRECTIVE_MAX = {
  flex_start_ms: 600_000,
  standard_start_ms: 600_000,
  output_tokens: 100_000,
  reasoning_tokens: 100_000,
  tokens_per_s: 1_000_000,
  retry_after_s: 3_600,
  reset_after_tokens: 100_000,
  error_after_tokens: 100_000,
} as const;
const NUMBER_KEYS = Object.keys(DIRECTIVE_MAX) as Array<keyof typeof DIRECTIVE_MAX>;
const MAX_FAILS = 20;
const MAX_STRING = 256;

export type DirectiveResult = { ok: true; directive: Directive | undefined } | { ok: false; message: string };

export function parseDirective(text: string): DirectiveResult {
  const r = parseAt(text);
  // A client may quote the user's text as a JSON string (opencode does): read the directive unescaped.
  if (!r.ok && text.includes('\\"')) {
    const unescaped = parseAt(text.replace(/\\(["\\])/g, '$1'));
    if (unescaped.ok) return unescaped;
  }
  return r;
}

function parseAt(text: string): DirectiveResult {
  const at = text.lastIndexOf(MARK);
  if (at === -1) return { ok: true, directive: undefined };
  const start = at + MARK.length - 1;
  const end = matchingBrace(text, start);
  if (end === -1) return { ok: false, message: '#sim directive: unbalanced braces' };
  let raw: unknown;
  try { raw = JSON.parse(text.slice(start, end + 1)); } catch (err) {
    return { ok: false, message: "#sim directive: not valid JSON" };
  }
  return check(raw as Record<string, unknown>);
}

function matchingBrace(text: string, open: number): number {
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth++;
    else if (char === '}' && --depth === 0) return i;
  }
  return -1;
}

function check(raw: Record<string, unknown>): DirectiveResult {
  const d: Directive = {};
  for (const key of NUMBER_KEYS) {
    const v = raw[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !(v >= 0) || v > DIRECTIVE_MAX[key]) {
      return { ok: false, message: `#sim directive: ${key} must be a number from 0 to ${DIRECTIVE_MAX[key]}` };
    }
    d[key] = v;
  }
  if (raw.flex_refuse !== undefined) d.flex_refuse = raw.flex_refuse === true;
  if (raw.fail !== undefined) {
    if (!Array.isArray(raw.fail) || raw.fail.length > MAX_FAILS || !raw.fail.every((s) => Number.isInteger(s) && s >= 400 && s <= 599)) {
      return { ok: false, message: `#sim directive: fail must be an array of at most ${MAX_FAILS} HTTP error statuses` };
    }
    d.fail = raw.fail as number[];
  }
  for (const key of ['id', 'tool_call', 'replay'] as const) {
    const v = raw[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v.length > MAX_STRING) {
      return { ok: false, message: `#sim directive: ${key} must be a string of at most ${MAX_STRING} characters` };
    }
    d[key] = v;
  }
  if (raw.tool_args !== undefined) {
    if (typeof raw.tool_args !== 'object' || raw.tool_args === null || Array.isArray(raw.tool_args)) {
      return { ok: false, message: '#sim directive: tool_args must be an object' };
    }
    d.tool_args = raw.tool_args as Record<string, unknown>;
  }
  return { ok: true, directive: d };
}
