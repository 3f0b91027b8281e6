// IR parts → Vertex Content parts, for requests and for non-streamed responses.
//
// Gemini puts a thoughtSignature on the part it belongs to. The IR carries one on a reasoning
// part or a tool call; a reasoning part that has a signature but no text (what the decoders make
// of a signature on a text part, what a Messages caller sends back as an empty thinking block,
// what an Interactions thought step without summary decodes to) gives it to the part after it.
import { GatewayError } from '../../errors.ts';
import type { IRPart } from '../../ir.ts';
import { lookupTable } from '../lookup-table.ts';

export type VertexPart = Record<string, unknown>;

/** `callNames` maps tool call ids to names, for functionResponse parts (filled as calls pass).
 *  In a request a call carries its id, and a result the id of the call it answers: Gemini pairs a
 *  response with its call by id (by position among same-named ones without), and a caller's ids
 *  are how it said which result is whose. For a response body (`response`), unsigned thought text
 *  is shown, arguments cut off by max_tokens become {} instead of an error, and no id is shown
 *  (Vertex names none; ours would be made up). */
export function encodeParts(parts: IRPart[], callNames: Map<string, string>, response = false): VertexPart[] {
  const out: VertexPart[] = [];
  let pending: string | undefined;
  const push = (part: VertexPart): void => {
    if (pending) {
      if (part.thoughtSignature) out.push({ text: '', thoughtSignature: pending });
      else part.thoughtSignature = pending;
      pending = undefined;
    }
    out.push(part);
  };
  for (const p of parts) {
    switch (p.type) {
      case 'reasoning':
        if (!p.signature || p.anthropic) { // Gemini wants its own signed thoughts back, nothing else
          if (response && p.text) push({ text: p.text, thought: true });
          break;
        }
        if (p.text) push({ text: p.text, thought: true, thoughtSignature: p.signature });
        else {
          if (pending) out.push({ text: '', thoughtSignature: pending });
          pending = p.signature;
        }
        break;
      case 'text':
        if (p.text || pending) push({ text: p.text });
        break;
      case 'image':
      case 'file':
        push(mediaPart(p));
        break;
      case 'tool_call':
        callNames.set(p.id, p.name);
        push({
          functionCall: { ...(!response && p.id ? { id: p.id } : {}), name: p.name, args: argsObject(p.arguments, p.id, response) },
          ...(p.signature ? { thoughtSignature: p.signature } : {}),
        });
        break;
      case 'tool_result': {
        const name = callNames.get(p.callId);
        push({ functionResponse: {
          ...(!response && p.callId && name !== undefined ? { id: p.callId } : {}),
          name: name ?? p.name ?? '', response: responseObject(p.content, p.isError === true),
        } });
        break;
      }
    }
  }
  if (pending) out.push({ text: '', thoughtSignature: pending });
  return out;
}

function mediaPart(p: Extract<IRPart, { type: 'image' | 'file' }>): VertexPart {
  const mimeType = p.mediaType ?? (p.type === 'image' ? imageTypeOfUrl(p.url) ?? 'image/png' : 'application/pdf');
  if (p.data) return { inlineData: { mimeType, data: p.data } };
  if (p.url) return { fileData: { mimeType, fileUri: p.url } };
  throw new GatewayError('invalid_request', `An ${p.type} part has neither data nor url.`, { param: 'contents' });
}

/** Image media types by file extension. Vertex needs a fileData's mimeType and an image URL
 *  comes without one (Chat's image_url, a Messages url source). Looked up with the URL's
 *  extension: no prototype, so `.constructor` is an unknown extension (image/png). */
const IMAGE_TYPES = lookupTable({
  jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp', gif: 'image/gif', heic: 'image/heic', heif: 'image/heif',
});

/** The image type a URL's path names by its extension (query and fragment ignored), if it does. */
function imageTypeOfUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  let path: string;
  try { path = new URL(url).pathname; } catch { return undefined; }
  const ext = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return ext ? IMAGE_TYPES[ext] : undefined;
}

function argsObject(args: string, id: string, lenient: boolean): Record<string, unknown> {
  if (!args.trim()) return {};
  let parsed: unknown;
  try { parsed = JSON.parse(args); } catch {
    if (lenient) return {};
    throw new GatewayError('invalid_request', `The arguments of tool call ${id} are not valid JSON.`, { param: 'contents' });
  }
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed as Record<string, unknown> : { value: parsed };
}

/** functionResponse.response must be an object: a JSON object result as it is, anything else
 *  under `result` (or `error` for a failed call). */
function responseObject(content: string, isError: boolean): Record<string, unknown> {
  if (!isError) {
    try {
      const parsed: unknown = JSON.parse(content);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch { /* plain text */ }
  }
  return isError ? { error: content } : { result: content };
}
