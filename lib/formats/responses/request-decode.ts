// Responses request body → IRRequest. Input items become IR messages in order; consecutive items of
// one role share a message, so an assistant turn (reasoning, text, function calls) and the tool
// results that answer it each read as one message, as the other formats expect.
import { GatewayError } from '../../errors.ts';
import type { IRMessage, IRPart, IRRequest, IRResponseFormat, IRToolChoice, IRToolDef } from '../../ir.ts';
import { isPlainObject } from '../../json-util.ts';
import { parseDataUrl } from '../openai-shared.ts';
import { ANTHROPIC_SIGNATURE_TAG, GEMINI_SIGNATURE_TAG, untag } from '../reasoning-tags.ts';

/** Fields this decoder maps into the IR; every other field travels in native. */
const MAPPED = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'max_output_tokens', 'temperature',
  'top_p', 'reasoning', 'text', 'stream', 'parallel_tool_calls',
]);
/** Fields the gateway or the adapter owns: never forwarded from the caller. */
const OWNED = new Set(['service_tier', 'stream_options']);
const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);

export function decodeResponsesRequest(body: Record<string, any>): IRRequest {
  if (typeof body.model !== 'string' || !body.model) throw invalid('model', 'model must be a non-empty string.');
  const native: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (!MAPPED.has(k) && !OWNED.has(k) && v !== undefined) native[k] = v;

  const system: string[] = [];
  if (typeof body.instructions === 'string' && body.instructions) system.push(body.instructions);
  const messages = decodeInput(body.input, system);

  const ir: IRRequest = { model: body.model, messages, stream: body.stream === true };
  if (system.length) ir.system = system.join('\n\n');
  decodeTools(body.tools, ir, native);
  decodeToolChoice(body.tool_choice, ir, native);
  if (typeof body.max_output_tokens === 'number') ir.maxOutputTokens = body.max_output_tokens;
  if (typeof body.temperature === 'number') ir.temperature = body.temperature;
  if (typeof body.top_p === 'number') ir.topP = body.top_p;
  decodeReasoning(body.reasoning, ir, native);
  decodeText(body.text, ir, native);
  if (typeof body.parallel_tool_calls === 'boolean') ir.parallelToolCalls = body.parallel_tool_calls;
  if (Object.keys(native).length) ir.native = { family: 'responses', fields: native };
  return ir;
}

function decodeInput(input: unknown, system: string[]): IRMessage[] {
  if (input === undefined || input === null) return [];
  if (typeof input === 'string') return [{ role: 'user', content: [{ type: 'text', text: input }] }];
  if (!Array.isArray(input)) throw invalid('input', 'input must be a string or an array of items.');
  const messages: IRMessage[] = [];
  const callNames = new Map<string, string>();
  const add = (role: IRMessage['role'], parts: IRPart[]): void => {
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.content.push(...parts);
    else messages.push({ role, content: parts });
  };
  input.forEach((item: any, i: number) => {
    if (!isPlainObject(item)) throw invalid(`input[${i}]`, 'Each input item must be an object.');
    const type = item.type ?? 'message';
    switch (type) {
      case 'message': {
        const role = item.role;
        if (role === 'system' || role === 'developer') { system.push(textOf(item.content, `input[${i}].content`)); return; }
        if (role !== 'user' && role !== 'assistant') throw invalid(`input[${i}].role`, `Unknown role ${JSON.stringify(role)}.`);
        add(role, contentParts(item.content, `input[${i}].content`));
        return;
      }
      case 'function_call': {
        if (typeof item.call_id !== 'string' || typeof item.name !== 'string') {
          throw invalid(`input[${i}]`, 'function_call needs call_id and name.');
        }
        callNames.set(item.call_id, item.name);
        const args = typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {});
        add('assistant', [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: args }]);
        return;
      }
      case 'function_call_output': {
        if (typeof item.call_id !== 'string') throw invalid(`input[${i}].call_id`, 'function_call_output needs call_id.');
        const [content, extra] = toolOutput(item.output, `input[${i}].output`);
        const part: IRPart = { type: 'tool_result', callId: item.call_id, content };
        const name = callNames.get(item.call_id);
        if (name) part.name = name;
        add('user', extra ? [part, ...extra] : [part]);
        return;
      }
      case 'reasoning': {
        const part: IRPart = { type: 'reasoning' };
        const text = reasoningText(item);
        if (text) part.text = text;
        if (typeof item.encrypted_content === 'string' && item.encrypted_content) Object.assign(part, reasoningValue(item.encrypted_content));
        if (typeof item.id === 'string') part.id = item.id;
        add('assistant', [part]);
        return;
      }
      default:
        // item_reference, hosted tool calls and their outputs name server-side state the IR cannot carry.
        throw new GatewayError(
          'unsupported_parameter', `Input items of type ${JSON.stringify(type)} are not supported.`, { param: `input[${i}].type` },
        );
    }
  });
  return messages;
}

function contentParts(content: unknown, param: string): IRPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid(param, 'content must be a string or an array of parts.');
  return content.map((p: any, i: number): IRPart => {
    switch (p?.type) {
      case 'input_text': case 'output_text': case 'text':
        return { type: 'text', text: String(p.text ?? '') };
      case 'refusal':
        return { type: 'text', text: String(p.refusal ?? '') };
      case 'input_image': {
        if (typeof p.image_url !== 'string') throw unsupported(`${param}[${i}]`, 'input_image needs image_url (file_id is not supported).');
        const inline = parseDataUrl(p.image_url);
        return inline ? { type: 'image', mediaType: inline.mediaType, data: inline.data } : { type: 'image', url: p.image_url };
      }
      case 'input_file': {
        const part: IRPart = { type: 'file' };
        if (typeof p.file_data === 'string') {
          const inline = parseDataUrl(p.file_data);
          if (inline) { part.mediaType = inline.mediaType; part.data = inline.data; } else part.data = p.file_data;
        } else if (typeof p.file_url === 'string') part.url = p.file_url;
        else throw unsupported(`${param}[${i}]`, 'input_file needs file_data or file_url (file_id is not supported).');
        if (typeof p.filename === 'string') part.filename = p.filename;
        return part;
      }
      default:
        throw unsupported(`${param}[${i}].type`, `Content parts of type ${JSON.stringify(p?.type)} are not supported.`);
    }
  });
}

function textOf(content: unknown, param: string): string {
  return contentParts(content, param).map(p => (p.type === 'text' ? p.text : '')).join('');
}

/** A function_call_output's output: its text (a list's text parts joined), and the images and
 *  files of a list, which the IR's text-only tool result cannot hold: they follow the result as
 *  parts of the same user message, as Messages tool_result images do. */
function toolOutput(output: unknown, param: string): [string, IRPart[] | undefined] {
  if (typeof output === 'string') return [output, undefined];
  if (!Array.isArray(output)) return [JSON.stringify(output ?? ''), undefined];
  let text = '';
  let extra: IRPart[] | undefined;
  for (const part of contentParts(output, param)) {
    if (part.type === 'text') text += part.text;
    else (extra ??= []).push(part);
  }
  return [text, extra];
}

/** A reasoning item's encrypted_content in its vendor's IR field: OpenAI's own (untagged), or a
 *  signature a Claude or Gemini answer gave this caller, tagged (reasoning-tags.ts). Gemini's is
 *  the unmarked signature, which only the Gemini encoders send. An empty tagged value is none. */
function reasoningValue(value: string): { encrypted?: string; signature?: string; anthropic?: true } {
  const claude = untag(ANTHROPIC_SIGNATURE_TAG, value);
  if (claude !== undefined) return claude ? { signature: claude, anthropic: true } : {};
  const gemini = untag(GEMINI_SIGNATURE_TAG, value);
  if (gemini !== undefined) return gemini ? { signature: gemini } : {};
  return { encrypted: value };
}

function reasoningText(item: any): string {
  const pick = (list: unknown, type: string): string[] =>
    Array.isArray(list)
      ? list.filter((part: any) => part?.type === type && typeof part.text === 'string').map((part: any) => part.text)
      : [];
  const summary = pick(item.summary, 'summary_text');
  return (summary.length ? summary : pick(item.content, 'reasoning_text')).join('\n\n');
}

function decodeTools(tools: unknown, ir: IRRequest, native: Record<string, unknown>): void {
  if (tools === undefined || tools === null) return;
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  const defs: IRToolDef[] = [];
  const hosted: unknown[] = [];
  for (const tool of tools as any[]) {
    if (tool?.type !== 'function') { hosted.push(tool); continue; }
    if (typeof tool.name !== 'string') throw invalid('tools', 'A function tool needs a name.');
    const def: IRToolDef = {
      name: tool.name, parameters: isPlainObject(tool.parameters) ? tool.parameters : { type: 'object', properties: {} },
    };
    if (typeof tool.description === 'string') def.description = tool.description;
    if (typeof tool.strict === 'boolean') def.strict = tool.strict;
    defs.push(def);
  }
  if (defs.length) ir.tools = defs;
  // Hosted tools (web_search, file_search…) run at vendor A only; the native merge appends them.
  if (hosted.length) native.tools = hosted;
}

function decodeToolChoice(choice: unknown, ir: IRRequest, native: Record<string, unknown>): void {
  if (choice === undefined || choice === null) return;
  if (choice === 'auto' || choice === 'none' || choice === 'required') { ir.toolChoice = choice; return; }
  if (isPlainObject(choice) && choice.type === 'function' && typeof choice.name === 'string') {
    ir.toolChoice = { name: choice.name } satisfies IRToolChoice;
    return;
  }
  native.tool_choice = choice; // allowed_tools, hosted tool choices
}

function decodeReasoning(reasoning: unknown, ir: IRRequest, native: Record<string, unknown>): void {
  if (!isPlainObject(reasoning)) return;
  const { effort, ...rest } = reasoning;
  if (typeof effort === 'string' && EFFORTS.has(effort)) ir.reasoning = { effort: effort as 'minimal' | 'low' | 'medium' | 'high' };
  else if (effort !== undefined && effort !== null) native.reasoning = reasoning; // 'none', 'xhigh'
  if (Object.keys(rest).length && !native.reasoning) native.reasoning = rest; // summary, generate_summary
}

function decodeText(text: unknown, ir: IRRequest, native: Record<string, unknown>): void {
  if (!isPlainObject(text)) return;
  const { format, ...rest } = text;
  if (isPlainObject(format)) {
    if (format.type === 'json_schema') {
      if (!isPlainObject(format.schema)) throw invalid('text.format.schema', 'json_schema format needs a schema object.');
      const rf: IRResponseFormat = { type: 'json_schema', schema: format.schema };
      if (typeof format.name === 'string') rf.name = format.name;
      if (typeof format.strict === 'boolean') rf.strict = format.strict;
      ir.responseFormat = rf;
    } else if (format.type === 'json_object') ir.responseFormat = { type: 'json_object' };
    else if (format.type !== 'text') {
      throw unsupported('text.format.type', `text.format type ${JSON.stringify(format.type)} is not supported.`);
    }
  }
  if (Object.keys(rest).length) native.text = rest; // verbosity
}

const invalid = (param: string, msg: string) => new GatewayError('invalid_request', msg, { param });
const unsupported = (param: string, msg: string) => new GatewayError('unsupported_parameter', msg, { param });
