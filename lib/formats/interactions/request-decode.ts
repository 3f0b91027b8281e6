// Interactions request body → IR. `input` may be a string, one content part, content parts, steps
// or {role, content} turns. What the IR cannot hold (hosted tools and their steps, other
// generation_config keys, previous_interaction_id, …) stays in native.fields.
import { GatewayError } from '../../errors.ts';
import type { IRMessage, IRPart, IRRequest, IRResponseFormat, IRToolChoice, IRToolDef } from '../../ir.ts';
import { ANTHROPIC_SIGNATURE_TAG, OPENAI_ENCRYPTED_TAG, untag } from '../reasoning-tags.ts';
import { lookupTable } from '../lookup-table.ts';

const CONSUMED = new Set([
  'model', 'input', 'system_instruction', 'tools', 'response_format', 'generation_config', 'stream',
  'service_tier', // the tier follows from start_within; never forwarded
]);
const GENERATION_KEYS = new Set(['max_output_tokens', 'thinking_level', 'temperature', 'top_p', 'stop_sequences', 'tool_choice']);
/** The documented thinking_level values, the IR's efforts; another goes to vendor B as sent. */
export const THINKING_LEVELS: ReadonlySet<unknown> = new Set(['minimal', 'low', 'medium', 'high']);

/** Per item type, the keys the decoder reads; any other key makes the original `input` travel
 *  in native.fields. Looked up with the caller's type: no prototype, so "constructor" or
 *  "toString" is an unknown type like any other. */
const ITEM_KEYS: Readonly<Record<string, string[]>> = lookupTable({
  text: ['type', 'text'],
  image: ['type', 'data', 'uri', 'mime_type'],
  audio: ['type', 'data', 'uri', 'mime_type'],
  video: ['type', 'data', 'uri', 'mime_type'],
  document: ['type', 'data', 'uri', 'mime_type'],
  user_input: ['type', 'content'],
  model_output: ['type', 'content'],
  thought: ['type', 'signature', 'summary'],
  function_call: ['type', 'id', 'name', 'arguments', 'signature'],
  function_result: ['type', 'call_id', 'name', 'result', 'is_error'],
});

const invalid = (param: string, message: string) => new GatewayError('invalid_request', message, { param });

class Loss {
  lossy = false;
  check(obj: Record<string, unknown>, known: string[]): void {
    if (!this.lossy && Object.keys(obj).some((k) => !known.includes(k))) this.lossy = true;
  }
}

/** Builds the IR turn list, appending to the last message while the role stays the same. */
class Turns {
  readonly messages: IRMessage[] = [];
  add(role: IRMessage['role'], parts: IRPart[]): void {
    if (!parts.length) return;
    const last = this.messages.at(-1);
    if (last?.role === role) last.content.push(...parts);
    else this.messages.push({ role, content: parts });
  }
}

export function decodeInteractionsRequest(body: Record<string, any>): IRRequest {
  if (typeof body.model !== 'string') throw invalid('model', 'model must be a string (agent interactions are not served).');
  const native: Record<string, unknown> = {};
  const loss = new Loss();
  const ir: IRRequest = { model: body.model, messages: decodeInput(body.input, loss), stream: body.stream === true };
  if (loss.lossy) native.input = body.input;

  if (body.system_instruction !== undefined) {
    if (typeof body.system_instruction !== 'string') throw invalid('system_instruction', 'system_instruction must be a string.');
    if (body.system_instruction) ir.system = body.system_instruction;
  }
  if (body.tools !== undefined) {
    const toolLoss = new Loss();
    const tools = decodeTools(body.tools, toolLoss);
    if (tools.length) ir.tools = tools;
    if (toolLoss.lossy) native.tools = body.tools;
  }
  if (isLegacySchema(body)) ir.responseFormat = { type: 'json_schema', schema: body.response_format };
  else if (body.response_format !== undefined) {
    const fmtLoss = new Loss();
    const format = decodeResponseFormat(body.response_format, fmtLoss);
    if (format) ir.responseFormat = format;
    if (fmtLoss.lossy) native.response_format = body.response_format;
  }
  if (body.response_mime_type === 'application/json' && !ir.responseFormat) ir.responseFormat = { type: 'json_object' };
  if (body.generation_config !== undefined) {
    const extras = decodeGenerationConfig(body.generation_config, ir);
    if (Object.keys(extras).length) native.generation_config = extras;
  }
  for (const [k, v] of Object.entries(body)) {
    if (CONSUMED.has(k) || (k === 'response_mime_type' && v === 'application/json')) continue;
    native[k] = v;
  }
  if (Object.keys(native).length) ir.native = { family: 'interactions', fields: native };
  return ir;
}

function decodeInput(input: unknown, loss: Loss): IRMessage[] {
  const turns = new Turns();
  if (input === undefined || input === null) return turns.messages;
  if (typeof input === 'string') { turns.add('user', input ? [{ type: 'text', text: input }] : []); return turns.messages; }
  const items = Array.isArray(input) ? input : [input];
  items.forEach((item, i) => decodeItem(item, `input[${i}]`, turns, loss, 'user'));
  return turns.messages;
}

/** One input element: a content part (joins the current turn of `role`), a step, or a turn. */
function decodeItem(item: any, path: string, turns: Turns, loss: Loss, role: IRMessage['role']): void {
  if (typeof item === 'string') { turns.add(role, item ? [{ type: 'text', text: item }] : []); return; }
  if (!item || typeof item !== 'object') throw invalid(path, 'Each input item must be an object or a string.');
  if (item.type === undefined && typeof item.role === 'string') { decodeTurn(item, path, turns, loss); return; }
  if (typeof item.type !== 'string') throw invalid(path, 'Each input item needs a type.');
  const known = ITEM_KEYS[item.type];
  if (!known) { loss.lossy = true; return; } // hosted tool steps (google_search_call, …): native only
  loss.check(item, known);
  switch (item.type) {
    case 'user_input':
      contentList(item.content, `${path}.content`).forEach((part, k) => decodeItem(part, `${path}.content[${k}]`, turns, loss, 'user'));
      return;
    case 'model_output':
      contentList(item.content, `${path}.content`)
        .forEach((part, k) => decodeItem(part, `${path}.content[${k}]`, turns, loss, 'assistant'));
      return;
    case 'thought': {
      const summary = Array.isArray(item.summary)
        ? item.summary.filter((part: any) => part?.type === 'text').map((part: any) => String(part.text ?? ''))
        : [];
      if (Array.isArray(item.summary) && summary.length < item.summary.length) loss.lossy = true;
      // Joined as they came: a streamed summary arrives as one item per delta, and Claude's
      // signature covers its thinking text exactly.
      const reasoning: IRPart = {
        type: 'reasoning', ...(summary.length ? { text: summary.join('') } : {}), ...thoughtSignature(item.signature),
      };
      turns.add('assistant', [reasoning]);
      return;
    }
    case 'function_call':
      if (typeof item.id !== 'string' || typeof item.name !== 'string') throw invalid(path, 'A function_call needs an id and a name.');
      turns.add('assistant', [{
        type: 'tool_call', id: item.id, name: item.name, arguments: JSON.stringify(item.arguments ?? {}),
        ...(item.signature ? { signature: String(item.signature) } : {}),
      }]);
      return;
    case 'function_result':
      if (typeof item.call_id !== 'string') throw invalid(`${path}.call_id`, 'A function_result needs a call_id.');
      // Media in a result (an image the tool made) follow it in the same turn, as Messages
      // tool_result images and Responses tool-output images are carried (docs/decisions.md).
      turns.add('user', [{
        type: 'tool_result', callId: item.call_id, content: resultText(item.result, loss),
        ...(typeof item.name === 'string' ? { name: item.name } : {}), ...(item.is_error === true ? { isError: true } : {}),
      }, ...resultMedia(item.result)]);
      return;
    case 'text':
      if (typeof item.text !== 'string') throw invalid(`${path}.text`, 'text must be a string.');
      turns.add(role, item.text ? [{ type: 'text', text: item.text }] : []);
      return;
    default: // image, audio, video, document
      turns.add(role, [mediaPart(item)]);
  }
}

/** A thought step's signature: Gemini's own, or another vendor's that its answer gave this caller,
 *  tagged (reasoning-tags.ts): Claude's goes back to Anthropic only (the IR's `anthropic`), OpenAI's
 *  encrypted reasoning to vendor A only (the IR's `encrypted`). */
function thoughtSignature(value: unknown): { signature?: string; anthropic?: true; encrypted?: string } {
  if (!value) return {};
  const signature = String(value);
  const claude = untag(ANTHROPIC_SIGNATURE_TAG, signature);
  if (claude !== undefined) return claude ? { signature: claude, anthropic: true } : {};
  const openai = untag(OPENAI_ENCRYPTED_TAG, signature);
  if (openai !== undefined) return openai ? { encrypted: openai } : {};
  return { signature };
}

function decodeTurn(turn: any, path: string, turns: Turns, loss: Loss): void {
  const role = turn.role === 'user' ? 'user' : turn.role === 'model' || turn.role === 'assistant' ? 'assistant' : undefined;
  if (!role) throw invalid(`${path}.role`, 'A turn role must be "user" or "model".');
  loss.check(turn, ['role', 'content']);
  contentList(turn.content, `${path}.content`).forEach((part, k) => decodeItem(part, `${path}.content[${k}]`, turns, loss, role));
}

function contentList(content: unknown, path: string): unknown[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [content];
  if (Array.isArray(content)) return content;
  if (typeof content === 'object') return [content];
  throw invalid(path, 'content must be a string, a content part or an array of them.');
}

function mediaPart(item: any): IRPart {
  const mediaType = typeof item.mime_type === 'string' ? item.mime_type
    : item.type === 'image' && typeof item.data === 'string' ? imageTypeOf(item.data) : undefined;
  const src = {
    ...(mediaType ? { mediaType } : {}),
    ...(typeof item.data === 'string' ? { data: item.data } : {}),
    ...(typeof item.uri === 'string' ? { url: item.uri } : {}),
  };
  return item.type === 'image' ? { type: 'image', ...src } : { type: 'file', ...src };
}

/** The type of base64 image data from its first bytes (PNG, JPEG, GIF, WebP), for a part sent without
 *  mime_type: the API reads it from the bytes, while Anthropic wants the type that matches them and
 *  OpenAI an image data URL (not application/octet-stream). */
function imageTypeOf(base64: string): string | undefined {
  const head = Buffer.from(base64.slice(0, 16), 'base64').toString('latin1');
  if (head.startsWith('\x89PNG')) return 'image/png';
  if (head.startsWith('\xff\xd8\xff')) return 'image/jpeg';
  if (head.startsWith('GIF8')) return 'image/gif';
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

/** A function result as the IR's text: strings as they are, content lists as their text, other
 *  values as JSON. A list with anything but text is not the IR's whole story (vendor B gets the
 *  caller's own); its media go along as parts (resultMedia). */
function resultText(result: unknown, loss: Loss): string {
  if (typeof result === 'string') return result;
  if (Array.isArray(result)) {
    const texts = result.filter((part: any) => part?.type === 'text').map((part: any) => String(part.text ?? ''));
    if (texts.length < result.length) loss.lossy = true;
    return texts.join('\n');
  }
  return result === undefined ? '' : JSON.stringify(result);
}

const MEDIA_TYPES = new Set(['image', 'audio', 'video', 'document']);

/** The media parts of a function result's content list (FunctionResultSubcontent: image, audio,
 *  video, document beside text). */
function resultMedia(result: unknown): IRPart[] {
  if (!Array.isArray(result)) return [];
  return result.filter((part: any) => MEDIA_TYPES.has(part?.type)).map(mediaPart);
}

function decodeTools(tools: unknown, loss: Loss): IRToolDef[] {
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  const out: IRToolDef[] = [];
  tools.forEach((tool: any, i: number) => {
    if (!tool || typeof tool !== 'object') throw invalid(`tools[${i}]`, 'Each tool must be an object.');
    if (tool.type !== 'function') { loss.lossy = true; return; } // google_search, code_execution, …: native only
    if (typeof tool.name !== 'string') throw invalid(`tools[${i}].name`, 'A function tool needs a name.');
    loss.check(tool, ['type', 'name', 'description', 'parameters']);
    out.push({
      name: tool.name,
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      parameters: tool.parameters && typeof tool.parameters === 'object' ? tool.parameters : { type: 'object' },
    });
  });
  return out;
}

const FORMAT_TYPES = new Set(['text', 'image', 'audio', 'video']);

/** The deprecated form the SDK still types: `response_mime_type: "application/json"` beside a bare
 *  JSON schema as `response_format` (not one of the current format objects, which name a type of
 *  their own: text, image, audio, video). */
function isLegacySchema(body: Record<string, any>): boolean {
  const rf = body.response_format;
  if (body.response_mime_type !== 'application/json' || !rf || typeof rf !== 'object' || Array.isArray(rf)) return false;
  return rf.mime_type === undefined && !FORMAT_TYPES.has(rf.type);
}
function decodeResponseFormat(rf: unknown, loss: Loss): IRResponseFormat | undefined {
  const formats = Array.isArray(rf) ? rf : [rf];
  let out: IRResponseFormat | undefined;
  for (const format of formats as any[]) {
    if (!format || typeof format !== 'object') throw invalid('response_format', 'response_format must be an object or an array of them.');
    const json = format.mime_type === 'application/json' && (format.type === undefined || format.type === 'text');
    if (!json || out) { loss.lossy = true; continue; } // image/audio/video formats: native only
    loss.check(format, ['type', 'mime_type', 'schema']);
    out = format.schema && typeof format.schema === 'object' ? { type: 'json_schema', schema: format.schema } : { type: 'json_object' };
  }
  return out;
}

/** Reads the keys the IR has into `ir`; returns the rest (plus any key read only in part). */
function decodeGenerationConfig(gc: any, ir: IRRequest): Record<string, unknown> {
  if (!gc || typeof gc !== 'object') throw invalid('generation_config', 'generation_config must be an object.');
  const extras: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(gc)) if (!GENERATION_KEYS.has(k)) extras[k] = v;
  if (gc.max_output_tokens !== undefined) ir.maxOutputTokens = numberField(gc.max_output_tokens, 'generation_config.max_output_tokens');
  if (gc.temperature !== undefined) ir.temperature = numberField(gc.temperature, 'generation_config.temperature');
  if (gc.top_p !== undefined) ir.topP = numberField(gc.top_p, 'generation_config.top_p');
  if (gc.stop_sequences !== undefined) {
    if (!Array.isArray(gc.stop_sequences) || gc.stop_sequences.some((s: unknown) => typeof s !== 'string')) {
      throw invalid('generation_config.stop_sequences', 'stop_sequences must be an array of strings.');
    }
    if (gc.stop_sequences.length) ir.stopSequences = gc.stop_sequences;
  }
  if (gc.thinking_level !== undefined) {
    if (THINKING_LEVELS.has(gc.thinking_level)) ir.reasoning = { effort: gc.thinking_level };
    else extras.thinking_level = gc.thinking_level;
  }
  if (gc.tool_choice !== undefined) {
    const [choice, exact] = decodeToolChoice(gc.tool_choice);
    ir.toolChoice = choice;
    if (!exact) extras.tool_choice = gc.tool_choice;
  }
  return extras;
}

/** The IR choice, and whether it says all the caller said (allowed_tools with several names
 *  or mode "auto", and "validated", do not fit the IR and also travel natively). */
function decodeToolChoice(choice: any): [IRToolChoice, boolean] {
  switch (choice) {
    case 'auto': return ['auto', true];
    case 'any': return ['required', true];
    case 'none': return ['none', true];
    case 'validated': return ['required', false];
  }
  const allowed = choice?.allowed_tools;
  if (!allowed || typeof allowed !== 'object') {
    throw invalid('generation_config.tool_choice', 'tool_choice must be auto, any, none, validated or {allowed_tools}.');
  }
  const names: unknown[] = Array.isArray(allowed.tools) ? allowed.tools : [];
  const mode = allowed.mode ?? 'any';
  if (mode === 'none') return ['none', names.length === 0];
  if (names.length === 1 && typeof names[0] === 'string' && mode === 'any') return [{ name: names[0] }, true];
  return [mode === 'any' ? 'required' : 'auto', false];
}

function numberField(v: unknown, param: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(param, `${param} must be a number.`);
  return v;
}
