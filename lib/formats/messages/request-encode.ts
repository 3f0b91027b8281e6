// IR → Anthropic Messages request body (with `model`; without stream/service_tier, which the
// adapter owns; a body without max_tokens gets the adapter's, thinking.ts maxTokensFor).
// Must accept IR built from any caller format: same-role turns are merged, tool results lead their
// user turn, reasoning only survives when it carries a signature known to be Anthropic's, and
// thinking is sent only where Anthropic takes it (thinking.ts). Schemas Anthropic compiles (the
// response format, strict tools) are narrowed to its subset (anthropic-schema.ts): a Messages
// caller's body reaches a Claude route as sent, so what comes here is another format's JSON Schema.
import { GatewayError } from '../../errors.ts';
import type { IRMessage, IRPart, IRRequest, IRResponseFormat, IRToolChoice } from '../../ir.ts';
import { argumentsObject } from '../tool-args.ts';
import { toAnthropicSchema } from '../anthropic-schema.ts';
import { anthropicCallId, refuseToolNames, TOOL_NAME_RULES } from '../tool-identity.ts';
import { encodeSampling, encodeThinking } from './thinking.ts';

type Block = Record<string, unknown>;
interface WireMessage { role: 'user' | 'assistant'; content: Block[] }

export function encodeMessagesRequest(ir: IRRequest): Record<string, any> {
  const body: Record<string, any> = { model: ir.model };
  if (ir.maxOutputTokens !== undefined) body.max_tokens = ir.maxOutputTokens;
  if (ir.system) body.system = ir.system;
  body.messages = encodeMessages(ir.messages);
  if (ir.tools?.length) {
    refuseToolNames(ir.tools, TOOL_NAME_RULES.anthropic, 'Anthropic Messages');
    body.tools = ir.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      input_schema: objectRooted(tool.strict ? toAnthropicSchema(tool.parameters) : tool.parameters),
      ...(tool.strict ? { strict: true } : {}),
    }));
    const choice = encodeToolChoice(ir.toolChoice, ir.parallelToolCalls);
    if (choice) body.tool_choice = choice;
  }
  const thinking = encodeThinking(ir, body.messages, body.tool_choice);
  Object.assign(body, encodeSampling(ir, thinking !== undefined));
  if (ir.stopSequences?.length) body.stop_sequences = ir.stopSequences;
  if (thinking) body.thinking = thinking.thinking;
  const format = encodeFormat(ir.responseFormat);
  if (format || thinking?.effort) {
    body.output_config = { ...(thinking?.effort ? { effort: thinking.effort } : {}), ...(format ? { format } : {}) };
  }
  if (ir.native?.family === 'messages') copyNative(body, ir.native.fields);
  return body;
}

/** Anthropic wants `type: "object"` at an input schema's root ("input_schema.type: Field
 *  required"); the other formats take a schema without it (`{}`, bare `properties`), which means
 *  the same object. A root combinator or reference (anyOf, $ref, …) is left as it is: Anthropic
 *  takes no keyword beside a $ref, and typing a combinator would rewrite the caller's schema. */
function objectRooted(schema: Record<string, unknown>): Record<string, unknown> {
  if ('type' in schema || ROOT_COMBINATORS.some((k) => k in schema)) return schema;
  return { type: 'object', ...schema };
}
const ROOT_COMBINATORS = ['anyOf', 'oneOf', 'allOf', '$ref'];

/** native.fields hold what the IR could not: top-level extras, and the caller's own messages,
 *  system, tools, … when those carried detail the IR drops (cache_control, citations, a system-role
 *  message's position, …). A field held as undefined is one the caller did not send: a system that
 *  was all in system-role messages, which the caller's messages bring back. */
function copyNative(body: Record<string, any>, fields: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(fields)) {
    if (k === 'output_config' && v && typeof v === 'object') body.output_config = { ...(v as object), ...body.output_config };
    else if (v === undefined) delete body[k];
    else body[k] = v;
  }
}

export function encodeMessages(messages: IRMessage[]): WireMessage[] {
  const out: WireMessage[] = [];
  for (const message of messages) {
    const content = message.role === 'user' ? message.content.flatMap(userBlock) : message.content.flatMap(assistantBlock);
    if (!content.length) continue;
    const last = out.at(-1);
    if (last && last.role === message.role) last.content.push(...content);
    else out.push({ role: message.role, content });
  }
  // Anthropic wants a user turn's tool_result blocks before anything else in it.
  for (const message of out) {
    if (message.role !== 'user') continue;
    const results = message.content.filter((block) => block.type === 'tool_result');
    if (results.length && results.length < message.content.length) {
      message.content = [...results, ...message.content.filter((block) => block.type !== 'tool_result')];
    }
  }
  return out;
}

function userBlock(p: IRPart): Block[] {
  switch (p.type) {
    case 'text': return p.text ? [{ type: 'text', text: p.text }] : [];
    case 'image': return [imageBlock(p.mediaType, p.data, p.url)];
    case 'file': return [fileBlock(p)];
    case 'tool_result':
      return [{
        type: 'tool_result', tool_use_id: anthropicCallId(p.callId),
        ...(p.content ? { content: p.content } : {}), ...(p.isError ? { is_error: true } : {}),
      }];
    default: return []; // reasoning and tool calls belong to assistant turns
  }
}

function assistantBlock(p: IRPart): Block[] {
  switch (p.type) {
    case 'text': return p.text ? [{ type: 'text', text: p.text }] : [];
    case 'reasoning':
      // Anthropic rejects thinking it did not sign and verifies every signature it gets back, so
      // only one known to be its own goes (`anthropic`: a Claude answer's, handed to a Responses or
      // Interactions caller tagged, or a Messages caller's untagged one). Gemini's thought
      // signatures and OpenAI's encrypted reasoning are left out.
      if (!p.signature || !p.anthropic) return [];
      // redacted_thinking decodes to a reasoning part without text; give it back the same way.
      return [p.text === undefined
        ? { type: 'redacted_thinking', data: p.signature }
        : { type: 'thinking', thinking: p.text, signature: p.signature }];
    case 'tool_call': {
      const input = argumentsObject(p.arguments);
      if (!input) {
        throw new GatewayError('invalid_request', `The arguments of tool call ${p.id} are not valid JSON.`, { param: 'messages' });
      }
      return [{ type: 'tool_use', id: anthropicCallId(p.id), name: p.name, input }];
    }
    default: return []; // Anthropic takes no images, files or tool results from the assistant
  }
}

function imageBlock(mediaType: string | undefined, data: string | undefined, url: string | undefined): Block {
  if (data) return { type: 'image', source: { type: 'base64', media_type: mediaType ?? 'image/png', data } };
  if (url) return { type: 'image', source: { type: 'url', url } };
  throw new GatewayError('invalid_request', 'An image part has neither data nor url.', { param: 'messages' });
}

function fileBlock(p: Extract<IRPart, { type: 'file' }>): Block {
  const mediaType = p.mediaType ?? 'application/pdf';
  if (mediaType.startsWith('image/')) return imageBlock(mediaType, p.data, p.url);
  const title = p.filename ? { title: p.filename } : {};
  if (p.url && !p.data) {
    // A URL document is fetched as a PDF: a part typed as anything else (a video, audio) is
    // refused as its bytes would be, not sent for Anthropic to misread.
    if (mediaType === 'application/pdf') return { type: 'document', source: { type: 'url', url: p.url }, ...title };
    throw new GatewayError('unsupported_parameter', `Messages documents by URL take PDF, not ${mediaType}.`, { param: 'messages' });
  }
  if (!p.data) throw new GatewayError('invalid_request', 'A file part has neither data nor url.', { param: 'messages' });
  if (mediaType === 'application/pdf') {
    return { type: 'document', source: { type: 'base64', media_type: mediaType, data: p.data }, ...title };
  }
  if (mediaType.startsWith('text/')) {
    return {
      type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(p.data, 'base64').toString('utf8') }, ...title,
    };
  }
  throw new GatewayError('unsupported_parameter', `Messages documents take PDF or plain text, not ${mediaType}.`, { param: 'messages' });
}

/** The tool_choice object; one parallel calls are switched off in (Anthropic's switch lives
 *  there), `auto` when the caller named no choice. `none` takes no switch: it calls no tool. */
function encodeToolChoice(choice: IRToolChoice | undefined, parallel: boolean | undefined): Block | undefined {
  const single = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return parallel === false ? { type: 'auto', ...single } : undefined;
  if (choice === 'auto') return { type: 'auto', ...single };
  if (choice === 'required') return { type: 'any', ...single };
  if (choice === 'none') return { type: 'none' };
  return { type: 'tool', name: choice.name, ...single };
}

function encodeFormat(format: IRResponseFormat | undefined): Block | undefined {
  if (!format) return undefined;
  if (format.type === 'json_schema') return { type: 'json_schema', schema: toAnthropicSchema(format.schema) };
  throw new GatewayError(
    'unsupported_parameter', 'Messages has no JSON mode without a schema; send a json_schema response format.',
    { param: 'response_format' },
  );
}
