// IRRequest (from any caller format) → a Responses request body for vendor A. The adapter adds
// stream and service_tier. Reasoning replayed from another vendor (a signature, no encrypted
// content) means nothing to OpenAI and is dropped; OpenAI's own encrypted reasoning goes back as a
// reasoning item so the model keeps its chain of thought across tool calls.
import { GatewayError } from '../../errors.ts';
import type { IRMessage, IRPart, IRRequest } from '../../ir.ts';
import { chatFieldsAsResponses, dataUrl, mergeNative, refuseAudioVideo } from '../openai-shared.ts';
import { refuseToolNames, TOOL_NAME_RULES } from '../tool-identity.ts';
import { clampEffort } from '../effort-budget.ts';
import { openaiEfforts } from '../../catalog/openai-reasoning.ts';

export function encodeResponsesRequest(ir: IRRequest): Record<string, any> {
  const body: Record<string, any> = { model: ir.model };
  if (ir.system) body.instructions = ir.system;
  body.input = ir.messages.flatMap(encodeMessage);
  if (ir.tools?.length) {
    refuseToolNames(ir.tools, TOOL_NAME_RULES.openai, 'OpenAI Responses');
    body.tools = ir.tools.map(t => {
      const tool: Record<string, unknown> = { type: 'function', name: t.name };
      if (t.description !== undefined) tool.description = t.description;
      tool.parameters = t.parameters;
      // Omitted strict lets Responses choose strict only when the schema allows it.
      if (t.strict !== undefined) tool.strict = t.strict;
      return tool;
    });
  }
  if (ir.toolChoice !== undefined) {
    body.tool_choice = typeof ir.toolChoice === 'string' ? ir.toolChoice : { type: 'function', name: ir.toolChoice.name };
  }
  if (ir.parallelToolCalls !== undefined) body.parallel_tool_calls = ir.parallelToolCalls;
  if (ir.maxOutputTokens !== undefined) body.max_output_tokens = ir.maxOutputTokens;
  if (ir.temperature !== undefined) body.temperature = ir.temperature;
  if (ir.topP !== undefined) body.top_p = ir.topP;
  // A translated effort is held to those the model takes (minimal → low on GPT-5.2 and later);
  // a Responses caller's own body never comes here.
  if (ir.reasoning) {
    const taken = openaiEfforts(ir.model);
    body.reasoning = { effort: taken ? clampEffort(ir.reasoning.effort, taken) : ir.reasoning.effort };
  }
  if (ir.responseFormat) {
    const rf = ir.responseFormat;
    body.text = rf.type === 'json_object'
      ? { format: { type: 'json_object' } }
      : {
        format: {
          type: 'json_schema', name: rf.name ?? 'response', ...(rf.description !== undefined ? { description: rf.description } : {}),
          schema: rf.schema, ...(rf.strict !== undefined ? { strict: rf.strict } : {}),
        },
      };
  }
  if (ir.stopSequences?.length) {
    throw new GatewayError('unsupported_parameter', 'Stop sequences are not supported by the Responses API.', { param: 'stop' });
  }
  if (ir.native?.family === 'responses') mergeNative(body, ir.native.fields);
  else {
    if (ir.native?.family === 'chat') mergeNative(body, chatFieldsAsResponses(ir.native.fields));
    // A caller of another format replays reasoning as a signature; ask for the encrypted form so
    // the next turn can send it back (Responses callers choose their own `include`).
    if (body.reasoning && body.reasoning.effort !== 'none') body.include = ['reasoning.encrypted_content'];
  }
  return body;
}

/** One IR message → Responses input items, keeping part order. */
function encodeMessage(msg: IRMessage): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  let content: Record<string, unknown>[] | undefined; // the open message item's parts
  const flush = (): void => {
    if (content?.length) items.push({ type: 'message', role: msg.role, content });
    content = undefined;
  };
  for (const part of msg.content) {
    const wirePart = contentPart(part, msg.role);
    if (wirePart) { (content ??= []).push(wirePart); continue; }
    flush();
    const item = standaloneItem(part);
    if (item) items.push(item);
  }
  flush();
  return items;
}

function contentPart(part: IRPart, role: IRMessage['role']): Record<string, unknown> | undefined {
  switch (part.type) {
    case 'text':
      return role === 'assistant' ? { type: 'output_text', text: part.text, annotations: [] } : { type: 'input_text', text: part.text };
    case 'image':
      if (role === 'assistant') return undefined;
      return {
        type: 'input_image', detail: part.detail ?? 'auto',
        image_url: part.data !== undefined ? dataUrl(part.mediaType, part.data) : part.url,
      };
    case 'file': {
      if (role === 'assistant') return undefined;
      refuseAudioVideo(part.mediaType, 'input');
      const filePart: Record<string, unknown> = { type: 'input_file' };
      if (part.data !== undefined) {
        filePart.file_data = dataUrl(part.mediaType, part.data);
        filePart.filename = part.filename ?? defaultFilename(part.mediaType);
      } else {
        filePart.file_url = part.url;
        if (part.filename) filePart.filename = part.filename;
      }
      return filePart;
    }
    default:
      return undefined;
  }
}

function standaloneItem(part: IRPart): Record<string, unknown> | undefined {
  switch (part.type) {
    case 'tool_call':
      return { type: 'function_call', call_id: part.id, name: part.name, arguments: part.arguments };
    case 'tool_result':
      return { type: 'function_call_output', call_id: part.callId, output: part.content };
    case 'reasoning': {
      // Anthropic's and Gemini's signatures (also one a Responses caller sent back tagged, which
      // its decoder made a signature again) are not OpenAI's to verify.
      if (!part.encrypted) return undefined;
      const item: Record<string, unknown> = { type: 'reasoning' };
      if (part.id) item.id = part.id;
      item.summary = part.text ? [{ type: 'summary_text', text: part.text }] : [];
      item.encrypted_content = part.encrypted;
      return item;
    }
    default:
      return undefined; // images or files in an assistant turn: Responses has no slot for them
  }
}

function defaultFilename(mediaType: string | undefined): string {
  const ext = mediaType?.split('/')[1]?.split(/[+;]/)[0];
  return ext ? `file.${ext}` : 'file';
}
