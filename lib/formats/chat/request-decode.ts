// Chat Completions request body → IRRequest. System and developer messages fold into the IR's one
// system text; role "tool" messages become tool_result parts of a user message, consecutive ones
// sharing it. Fields the IR cannot carry travel in native: Chat-native parameters (penalties,
// seed, logprobs…) only a Chat passthrough to vendor A sends; the rest (store, user, verbosity…)
// the Responses encoder translates for vendor A's Responses wire, and other vendors drop.
import { GatewayError } from '../../errors.ts';
import type { IRMessage, IRPart, IRRequest, IRResponseFormat, IRToolDef } from '../../ir.ts';
import { isPlainObject } from '../../json-util.ts';
import { parseDataUrl } from '../openai-shared.ts';

const MAPPED = new Set([
  'model', 'messages', 'tools', 'tool_choice', 'max_completion_tokens', 'max_tokens', 'temperature',
  'top_p', 'reasoning_effort', 'response_format', 'stop', 'stream',
]);
/** Owned by the gateway or the adapter (stream_options.include_usage is read by the gateway). */
const OWNED = new Set(['service_tier', 'stream_options']);
const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);

export function decodeChatRequest(body: Record<string, any>): IRRequest {
  if (typeof body.model !== 'string' || !body.model) throw invalid('model', 'model must be a non-empty string.');
  if (!Array.isArray(body.messages)) throw invalid('messages', 'messages must be an array.');
  const native: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (MAPPED.has(k) || OWNED.has(k) || v === undefined || v === null) continue;
    if (k === 'n' && v === 1) continue;
    native[k] = v;
  }
  // Chat stores nothing unless asked, Responses by default: the Responses wire a Chat caller rides
  // must be told.
  native.store ??= false;
  const system: string[] = [];
  const ir: IRRequest = { model: body.model, messages: decodeMessages(body.messages, system), stream: body.stream === true };
  if (system.length) ir.system = system.join('\n\n');
  decodeTools(body.tools, ir, native);
  decodeToolChoice(body.tool_choice, ir, native);
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (typeof max === 'number') ir.maxOutputTokens = max;
  if (typeof body.temperature === 'number') ir.temperature = body.temperature;
  if (typeof body.top_p === 'number') ir.topP = body.top_p;
  if (typeof body.reasoning_effort === 'string') {
    if (EFFORTS.has(body.reasoning_effort)) ir.reasoning = { effort: body.reasoning_effort as 'minimal' | 'low' | 'medium' | 'high' };
    else native.reasoning_effort = body.reasoning_effort; // 'none', 'xhigh', 'max': OpenAI's only
  }
  decodeResponseFormat(body.response_format, ir);
  if (typeof body.parallel_tool_calls === 'boolean') {
    ir.parallelToolCalls = body.parallel_tool_calls;
    delete native.parallel_tool_calls;
  }
  if (typeof body.stop === 'string') ir.stopSequences = [body.stop];
  else if (Array.isArray(body.stop) && body.stop.length) ir.stopSequences = body.stop.map(String);
  ir.native = { family: 'chat', fields: native };
  return ir;
}

function decodeMessages(list: unknown[], system: string[]): IRMessage[] {
  const messages: IRMessage[] = [];
  const callNames = new Map<string, string>();
  list.forEach((message: any, i: number) => {
    if (!isPlainObject(message)) throw invalid(`messages[${i}]`, 'Each message must be an object.');
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(textOnly(message.content, `messages[${i}].content`));
        return;
      case 'user':
        messages.push({ role: 'user', content: userParts(message.content, `messages[${i}].content`) });
        return;
      case 'assistant': {
        const content: IRPart[] = [];
        const text = message.content === null || message.content === undefined ? '' : textOnly(message.content, `messages[${i}].content`);
        if (text) content.push({ type: 'text', text });
        if (Array.isArray(message.tool_calls)) {
          message.tool_calls.forEach((call: any, j: number) => {
            if (call?.type !== undefined && call.type !== 'function') {
              throw unsupported(`messages[${i}].tool_calls[${j}].type`, 'Only function tool calls are supported.');
            }
            const name = call?.function?.name;
            if (typeof call?.id !== 'string' || typeof name !== 'string') {
              throw invalid(`messages[${i}].tool_calls[${j}]`, 'A tool call needs id and function.name.');
            }
            callNames.set(call.id, name);
            const args = call.function.arguments;
            content.push({ type: 'tool_call', id: call.id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) });
          });
        } else if (message.function_call) {
          throw unsupported(`messages[${i}].function_call`, 'The legacy function_call field is not supported; use tool_calls.');
        }
        messages.push({ role: 'assistant', content });
        return;
      }
      case 'tool': {
        if (typeof message.tool_call_id !== 'string') throw invalid(`messages[${i}].tool_call_id`, 'A tool message needs tool_call_id.');
        const part: IRPart = {
          type: 'tool_result', callId: message.tool_call_id, content: textOnly(message.content ?? '', `messages[${i}].content`),
        };
        const name = callNames.get(message.tool_call_id);
        if (name) part.name = name;
        const last = messages[messages.length - 1];
        if (last?.role === 'user' && last.content.length && last.content.every(p => p.type === 'tool_result')) last.content.push(part);
        else messages.push({ role: 'user', content: [part] });
        return;
      }
      default:
        throw invalid(`messages[${i}].role`, `Unknown role ${JSON.stringify(message.role)}.`);
    }
  });
  return messages;
}

function userParts(content: unknown, param: string): IRPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid(param, 'content must be a string or an array of parts.');
  return content.map((p: any, i: number): IRPart => {
    switch (p?.type) {
      case 'text':
        return { type: 'text', text: String(p.text ?? '') };
      case 'image_url': {
        const url = typeof p.image_url === 'string' ? p.image_url : p.image_url?.url;
        if (typeof url !== 'string') throw invalid(`${param}[${i}].image_url`, 'image_url needs a url.');
        const inline = parseDataUrl(url);
        const part: IRPart = inline ? { type: 'image', mediaType: inline.mediaType, data: inline.data } : { type: 'image', url };
        const detail = p.image_url?.detail;
        if (typeof detail === 'string' && detail !== 'auto') part.detail = detail;
        return part;
      }
      case 'file': {
        const file = p.file ?? {};
        if (typeof file.file_data !== 'string') {
          throw unsupported(`${param}[${i}].file`, 'file parts need file_data (file_id is not supported).');
        }
        const inline = parseDataUrl(file.file_data);
        const part: IRPart = inline
          ? { type: 'file', mediaType: inline.mediaType, data: inline.data }
          : { type: 'file', data: file.file_data };
        if (typeof file.filename === 'string') part.filename = file.filename;
        return part;
      }
      default:
        throw unsupported(`${param}[${i}].type`, `Content parts of type ${JSON.stringify(p?.type)} are not supported.`);
    }
  });
}

function textOnly(content: unknown, param: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(param, 'content must be a string or an array of text parts.');
  return content.map((p: any, i: number) => {
    if (p?.type === 'text') return String(p.text ?? '');
    if (p?.type === 'refusal') return String(p.refusal ?? '');
    throw unsupported(`${param}[${i}].type`, `Only text parts are supported here, not ${JSON.stringify(p?.type)}.`);
  }).join('');
}

function decodeTools(tools: unknown, ir: IRRequest, native: Record<string, unknown>): void {
  if (tools === undefined || tools === null) return;
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  const defs: IRToolDef[] = [];
  const other: unknown[] = [];
  for (const tool of tools as any[]) {
    if (tool?.type !== 'function') { other.push(tool); continue; }
    const fn = tool.function ?? {};
    if (typeof fn.name !== 'string') throw invalid('tools', 'A function tool needs function.name.');
    const def: IRToolDef = { name: fn.name, parameters: isPlainObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } };
    if (typeof fn.description === 'string') def.description = fn.description;
    if (typeof fn.strict === 'boolean') def.strict = fn.strict;
    defs.push(def);
  }
  if (defs.length) ir.tools = defs;
  if (other.length) native.tools = other; // custom tools: Chat passthrough only
}

function decodeToolChoice(choice: unknown, ir: IRRequest, native: Record<string, unknown>): void {
  if (choice === undefined || choice === null) return;
  if (choice === 'auto' || choice === 'none' || choice === 'required') { ir.toolChoice = choice; return; }
  if (isPlainObject(choice) && choice.type === 'function' && isPlainObject(choice.function) && typeof choice.function.name === 'string') {
    ir.toolChoice = { name: choice.function.name };
    return;
  }
  native.tool_choice = choice; // allowed_tools, custom
}

function decodeResponseFormat(rf: unknown, ir: IRRequest): void {
  if (!isPlainObject(rf) || rf.type === 'text') return;
  if (rf.type === 'json_object') { ir.responseFormat = { type: 'json_object' }; return; }
  if (rf.type === 'json_schema' && isPlainObject(rf.json_schema)) {
    const js = rf.json_schema;
    const out: IRResponseFormat = { type: 'json_schema', schema: isPlainObject(js.schema) ? js.schema : {} };
    if (typeof js.name === 'string') out.name = js.name;
    if (typeof js.description === 'string') out.description = js.description;
    if (typeof js.strict === 'boolean') out.strict = js.strict;
    ir.responseFormat = out;
    return;
  }
  throw unsupported('response_format.type', `response_format type ${JSON.stringify(rf.type)} is not supported.`);
}

const invalid = (param: string, msg: string) => new GatewayError('invalid_request', msg, { param });
const unsupported = (param: string, msg: string) => new GatewayError('unsupported_parameter', msg, { param });
