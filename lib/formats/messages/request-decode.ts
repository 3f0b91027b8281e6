// Messages request body → IR. What the IR cannot hold (top_k, metadata, cache_control, citations,
// server tools, …) stays in native.fields so a Messages encoder can put it back; the validator
// refuses such fields before a request for another family gets here.
import { GatewayError } from '../../errors.ts';
import type { IRMessage, IRPart, IRRequest, IRResponseFormat, IRToolChoice, IRToolDef } from '../../ir.ts';
import { GEMINI_SIGNATURE_TAG, OPENAI_ENCRYPTED_TAG, untag } from '../reasoning-tags.ts';
import { lookupTable } from '../lookup-table.ts';

/** Keys the IR carries; every other top-level key goes to native.fields. */
const CONSUMED = new Set([
  'model', 'messages', 'system', 'tools', 'tool_choice', 'max_tokens', 'temperature', 'top_p',
  'thinking', 'stop_sequences', 'stream', 'output_config',
  'service_tier', // the tier follows from start_within; never forwarded
]);

/** Per block type, the keys the decoder reads; any other key (cache_control, citations, context,
 *  …) makes the original `messages` travel in native.fields. Looked up with the caller's type:
 *  no prototype, so "constructor" or "toString" is an unknown type like any other. */
const BLOCK_KEYS: Readonly<Record<string, string[]>> = lookupTable({
  text: ['type', 'text'],
  image: ['type', 'source'],
  document: ['type', 'source', 'title'],
  file: ['type', 'source', 'title'],
  tool_use: ['type', 'id', 'name', 'input'],
  tool_result: ['type', 'tool_use_id', 'content', 'is_error'],
  thinking: ['type', 'thinking', 'signature'],
  redacted_thinking: ['type', 'data'],
});

const invalid = (param: string, message: string) => new GatewayError('invalid_request', message, { param });

/** Records whether a part of the body lost detail on its way into the IR. */
class Loss {
  lossy = false;
  check(obj: Record<string, unknown>, known: string[]): void {
    if (!this.lossy && Object.keys(obj).some((k) => !known.includes(k))) this.lossy = true;
  }
}

export function decodeMessagesRequest(body: Record<string, any>): IRRequest {
  if (typeof body.model !== 'string') throw invalid('model', 'model must be a string.');
  if (!Array.isArray(body.messages)) throw invalid('messages', 'messages must be an array.');
  const native: Record<string, unknown> = {};

  const system: string[] = [];
  const sysLoss = new Loss();
  if (body.system !== undefined) {
    const text = decodeSystem(body.system, 'system', sysLoss);
    if (text) system.push(text);
  }
  // A system-role message (the SDK's SystemMessageParam, as Claude Code sends its environment after
  // the user's turn) folds into the IR's one system text, after the top-level system, as Chat's
  // mid-conversation system messages do. Its position is detail the IR drops: the caller's messages
  // and system travel in native.fields, so a Messages encoder puts it back where it was (and the
  // top-level system back as it was, without the folded text).
  const msgLoss = new Loss();
  const messages: IRMessage[] = [];
  body.messages.forEach((message: any, i: number) => {
    const path = `messages[${i}]`;
    if (message?.role !== 'system') { messages.push(decodeMessage(message, path, msgLoss)); return; }
    msgLoss.lossy = sysLoss.lossy = true;
    const text = decodeSystem(message.content, `${path}.content`, msgLoss);
    if (text) system.push(text);
  });
  if (msgLoss.lossy) native.messages = body.messages;
  if (sysLoss.lossy) native.system = body.system;

  const ir: IRRequest = { model: body.model, messages: mergeSameRole(messages), stream: body.stream === true };
  if (system.length) ir.system = system.join('\n\n');
  if (body.tools !== undefined) {
    const loss = new Loss();
    const tools = decodeTools(body.tools, loss);
    if (tools.length) ir.tools = tools;
    if (loss.lossy) native.tools = body.tools;
  }
  if (body.tool_choice !== undefined) {
    const loss = new Loss();
    ir.toolChoice = decodeToolChoice(body.tool_choice, loss);
    const single = body.tool_choice.disable_parallel_tool_use;
    if (typeof single === 'boolean') ir.parallelToolCalls = !single;
    if (loss.lossy) native.tool_choice = body.tool_choice;
  }
  if (body.max_tokens !== undefined) ir.maxOutputTokens = numberField(body.max_tokens, 'max_tokens');
  if (body.temperature !== undefined) ir.temperature = numberField(body.temperature, 'temperature');
  if (body.top_p !== undefined) ir.topP = numberField(body.top_p, 'top_p');
  if (body.stop_sequences !== undefined) {
    if (!Array.isArray(body.stop_sequences) || body.stop_sequences.some((stop: unknown) => typeof stop !== 'string')) {
      throw invalid('stop_sequences', 'stop_sequences must be an array of strings.');
    }
    if (body.stop_sequences.length) ir.stopSequences = body.stop_sequences;
  }
  if (body.thinking !== undefined) {
    const loss = new Loss();
    const reasoning = decodeThinking(body.thinking, loss);
    if (reasoning) ir.reasoning = reasoning;
    if (loss.lossy) native.thinking = body.thinking;
  }
  if (body.output_config !== undefined) {
    if (!body.output_config || typeof body.output_config !== 'object') throw invalid('output_config', 'output_config must be an object.');
    const { format, ...rest } = body.output_config;
    if (format !== undefined && format !== null) ir.responseFormat = decodeFormat(format);
    if (Object.keys(rest).length) native.output_config = rest;
  }
  for (const [k, v] of Object.entries(body)) if (!CONSUMED.has(k)) native[k] = v;
  if (Object.keys(native).length) ir.native = { family: 'messages', fields: native };
  return ir;
}

function numberField(value: unknown, param: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(param, `${param} must be a number.`);
  return value;
}

function decodeMessage(message: any, path: string, loss: Loss): IRMessage {
  if (!message || typeof message !== 'object') throw invalid(path, 'Each message must be an object.');
  if (message.role !== 'user' && message.role !== 'assistant') throw invalid(`${path}.role`, 'role must be "user", "assistant" or "system".');
  loss.check(message, ['role', 'content']);
  return { role: message.role, content: decodeContent(message.content, `${path}.content`, loss) };
}

function decodeContent(content: unknown, path: string, loss: Loss): IRPart[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) throw invalid(path, 'content must be a string or an array of content blocks.');
  const parts: IRPart[] = [];
  content.forEach((block, j) => parts.push(...decodeBlock(block, `${path}[${j}]`, loss)));
  return parts;
}

function decodeBlock(block: any, path: string, loss: Loss): IRPart[] {
  if (!block || typeof block !== 'object' || typeof block.type !== 'string') {
    throw invalid(path, 'A content block must be an object with a type.');
  }
  const known = BLOCK_KEYS[block.type];
  if (!known) { loss.lossy = true; return []; } // server tool blocks, search results, …: native only
  loss.check(block, known);
  switch (block.type) {
    case 'text':
      if (typeof block.text !== 'string') throw invalid(`${path}.text`, 'text must be a string.');
      return [{ type: 'text', text: block.text }];
    case 'image':
      return [decodeImage(block.source, `${path}.source`, loss)];
    case 'document':
      return [decodeDocument(block, path, loss)];
    case 'file':
      // The spec's `file` block: a document by another name, which Anthropic's API has as a block
      // type nowhere (its `file` is a source, a Files API id). A base64 one becomes the canonical
      // file input for the other vendors; any other source stays native only (vendor A or B
      // models refuse it before this, see ./endpoint.ts). Either way a Messages encoder gets the
      // caller's block back as it was sent.
      loss.lossy = true;
      return block.source?.type === 'base64' ? [decodeDocument(block, path, loss)] : [];
    case 'tool_use':
      if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalid(path, 'tool_use needs an id and a name.');
      return [{ type: 'tool_call', id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) }];
    case 'tool_result':
      return decodeToolResult(block, path, loss);
    case 'thinking':
      return [{ type: 'reasoning', text: typeof block.thinking === 'string' ? block.thinking : '', ...thinkingSignature(block.signature) }];
    default: // redacted_thinking: no text, the opaque data rides as the signature (Anthropic's)
      return [{ type: 'reasoning', signature: String(block.data ?? ''), anthropic: true }];
  }
}

/** A thinking block's signature: untagged, Anthropic's own (marked, so only the Messages encoder
 *  sends it back); tagged (reasoning-tags.ts), Gemini's thought signature (the IR's unmarked
 *  signature, which only the Gemini encoders send) or OpenAI's encrypted reasoning (`encrypted`).
 *  An empty tagged value is none. */
function thinkingSignature(value: unknown): { signature?: string; encrypted?: string; anthropic?: true } {
  if (!value) return {};
  const signature = String(value);
  const gemini = untag(GEMINI_SIGNATURE_TAG, signature);
  if (gemini !== undefined) return gemini ? { signature: gemini } : {};
  const encrypted = untag(OPENAI_ENCRYPTED_TAG, signature);
  if (encrypted === undefined) return { signature, anthropic: true };
  return encrypted ? { encrypted } : {};
}

function decodeImage(source: any, path: string, loss: Loss): IRPart {
  if (source?.type === 'base64') {
    loss.check(source, ['type', 'media_type', 'data']);
    return { type: 'image', mediaType: source.media_type, data: source.data };
  }
  if (source?.type === 'url') {
    loss.check(source, ['type', 'url']);
    return { type: 'image', url: source.url };
  }
  throw new GatewayError('unsupported_parameter', 'Only base64 and url image sources are supported.', { param: path });
}

function decodeDocument(block: any, path: string, loss: Loss): IRPart {
  const source = block.source;
  const filename = typeof block.title === 'string' ? { filename: block.title } : {};
  switch (source?.type) {
    case 'base64':
      loss.check(source, ['type', 'media_type', 'data']);
      return { type: 'file', mediaType: source.media_type ?? 'application/pdf', data: source.data, ...filename };
    case 'text':
      loss.check(source, ['type', 'media_type', 'data']);
      return {
        type: 'file', mediaType: source.media_type ?? 'text/plain', data: Buffer.from(String(source.data ?? ''), 'utf8').toString('base64'),
        ...filename,
      };
    case 'url':
      loss.check(source, ['type', 'url']);
      return { type: 'file', mediaType: 'application/pdf', url: source.url, ...filename };
    case 'content': {
      loss.lossy = true;
      const text = Array.isArray(source.content)
        ? source.content.filter((part: any) => part?.type === 'text').map((part: any) => part.text).join('\n')
        : String(source.content ?? '');
      return { type: 'file', mediaType: 'text/plain', data: Buffer.from(text, 'utf8').toString('base64'), ...filename };
    }
    default:
      throw new GatewayError(
        'unsupported_parameter', 'Only base64, text, content and url document sources are supported.', { param: `${path}.source` },
      );
  }
}

/** A tool_result becomes one IR tool_result (its text joined); images inside it, which the IR's
 *  string content cannot hold, follow it as image parts of the same user message. */
function decodeToolResult(block: any, path: string, loss: Loss): IRPart[] {
  if (typeof block.tool_use_id !== 'string') throw invalid(`${path}.tool_use_id`, 'tool_result needs a tool_use_id.');
  const texts: string[] = [];
  const extra: IRPart[] = [];
  if (typeof block.content === 'string') texts.push(block.content);
  else if (Array.isArray(block.content)) {
    block.content.forEach((part: any, k: number) => {
      for (const p of decodeBlock(part, `${path}.content[${k}]`, loss)) {
        if (p.type === 'text') texts.push(p.text); else extra.push(p);
      }
    });
  } else if (block.content !== undefined) throw invalid(`${path}.content`, 'tool_result content must be a string or an array of blocks.');
  const result: IRPart = {
    type: 'tool_result', callId: block.tool_use_id, content: texts.join('\n'), ...(block.is_error === true ? { isError: true } : {}),
  };
  return [result, ...extra];
}

/** The top-level system or a system-role message's content (`path` names which): a string or
 *  text blocks. */
function decodeSystem(system: unknown, path: string, loss: Loss): string | undefined {
  if (typeof system === 'string') return system || undefined;
  if (!Array.isArray(system)) throw invalid(path, `${path} must be a string or an array of text blocks.`);
  const texts = system.map((block: any, i: number) => {
    if (block?.type !== 'text' || typeof block.text !== 'string') throw invalid(`${path}[${i}]`, 'system blocks must be text blocks.');
    loss.check(block, BLOCK_KEYS.text);
    return block.text;
  });
  return texts.length ? texts.join('\n\n') : undefined;
}

function decodeTools(tools: unknown, loss: Loss): IRToolDef[] {
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  const out: IRToolDef[] = [];
  tools.forEach((tool: any, i: number) => {
    if (!tool || typeof tool !== 'object') throw invalid(`tools[${i}]`, 'Each tool must be an object.');
    if (tool.type !== undefined && tool.type !== 'custom') { loss.lossy = true; return; } // server tools: native only
    if (typeof tool.name !== 'string') throw invalid(`tools[${i}].name`, 'A tool needs a name.');
    loss.check(tool, ['type', 'name', 'description', 'input_schema', 'strict']);
    out.push({
      name: tool.name,
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      parameters: tool.input_schema && typeof tool.input_schema === 'object' ? tool.input_schema : { type: 'object' },
      ...(typeof tool.strict === 'boolean' ? { strict: tool.strict } : {}),
    });
  });
  return out;
}

function decodeToolChoice(choice: any, loss: Loss): IRToolChoice {
  if (!choice || typeof choice !== 'object') throw invalid('tool_choice', 'tool_choice must be an object.');
  loss.check(choice, ['type', 'name', 'disable_parallel_tool_use']);
  switch (choice.type) {
    case 'auto': return 'auto';
    case 'any': return 'required';
    case 'none': return 'none';
    case 'tool':
      if (typeof choice.name !== 'string') throw invalid('tool_choice.name', 'tool_choice of type "tool" needs a name.');
      return { name: choice.name };
    default:
      throw invalid('tool_choice.type', 'tool_choice.type must be auto, any, tool or none.');
  }
}

function decodeThinking(thinking: any, loss: Loss): IRRequest['reasoning'] {
  if (!thinking || typeof thinking !== 'object') throw invalid('thinking', 'thinking must be an object.');
  switch (thinking.type) {
    case 'enabled': {
      loss.check(thinking, ['type', 'budget_tokens']);
      const budget = numberField(thinking.budget_tokens, 'thinking.budget_tokens');
      return { effort: budget < 2048 ? 'low' : budget < 8192 ? 'medium' : 'high', budgetTokens: budget };
    }
    case 'adaptive':
      loss.check(thinking, ['type']);
      return { effort: 'medium' };
    case 'disabled':
      return undefined;
    default:
      throw invalid('thinking.type', 'thinking.type must be enabled, adaptive or disabled.');
  }
}

function decodeFormat(format: any): IRResponseFormat {
  if (format?.type === 'json_schema' && format.schema && typeof format.schema === 'object') {
    return { type: 'json_schema', schema: format.schema };
  }
  throw new GatewayError(
    'unsupported_parameter', 'output_config.format must be {type:"json_schema", schema}.', { param: 'output_config.format' },
  );
}

function mergeSameRole(messages: IRMessage[]): IRMessage[] {
  const out: IRMessage[] = [];
  for (const message of messages) {
    const last = out.at(-1);
    if (last && last.role === message.role) last.content.push(...message.content);
    else out.push({ role: message.role, content: [...message.content] });
  }
  return out;
}
