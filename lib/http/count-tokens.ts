// POST /v1/messages/count_tokens for every model of the catalog (the Anthropic SDK's
// messages.countTokens; Claude Code and other agents call it). A vendor C model, for an
// organization with its own vendor C key, is counted by vendor C; anything else by the gateway's
// estimate (`estimateTokens`). `counted_by` says which: "vendor_c" or "gateway_estimate". Both
// paths first run the Messages decoder's checks (roles, block shapes), so a body one path refuses
// the other refuses too. Auth, abuse limits, the body cap and the Messages error envelope apply
// as on /v1/messages; nothing is generated, so no start_within, hold or charge. Each answer is
// counted (gateway_requests_total, endpoint "count_tokens") and has its summary line, as an
// inference request's.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors.ts';
import type { Services } from '../services.ts';
import { guard } from './auth.ts';
import { parseJsonObject, readBody, requestBodyLimits } from './body.ts';
import { asGatewayError, sendError, sendJson, setRequestId } from './reply.ts';
import { recordAnswer, type Summary } from './pipeline.ts';
import { checkCountTokens } from '../routing/validate.ts';
import { decodeMessagesRequest } from '../formats/messages/request-decode.ts';

export async function handleCountTokens(req: IncomingMessage, res: ServerResponse, svc: Services): Promise<void> {
  const t0 = svc.clock.now();
  // x-request-id and the Anthropic SDK's request-id, on every answer.
  const line: Summary = { req: setRequestId(res), endpoint: 'count_tokens', status: 200, cost_micro_usd: 0, ms: 0 };
  try {
    const key = await guard(req, svc);
    line.org = key.orgId;
    const bytes = await readBody(req, requestBodyLimits(svc));
    const { model, body, betas } = checkCountTokens(parseJsonObject(bytes), svc.catalog, req.headers);
    line.model = model.id;
    decodeMessagesRequest(body); // the checks /v1/messages runs on a body it translates; throws the caller's 400
    const own = model.family === 'vendor_c' ? await svc.orgs.providerKey(key.orgId, 'vendor_c') : undefined;
    const counter = svc.adapters.vendor_c.countTokens;
    if (own !== undefined && counter) {
      line.route = 'vendor_c';
      const upstream = counter({ body: { ...body, model: model.route_model_ids?.vendor_c ?? model.id }, credential: own, betas });
      const timeouts = svc.config.timeouts;
      let status: number;
      let text: string;
      try {
        const reply = await svc.pools.get('vendor_c', upstream.origin).request({
          method: 'POST', path: upstream.path, headers: { ...upstream.headers, 'accept-encoding': 'identity' }, body: upstream.body,
          headersTimeout: timeouts.upstream_first_byte_ms, bodyTimeout: timeouts.upstream_idle_ms,
        });
        text = await reply.body.text();
        status = reply.statusCode;
      } catch (err) {
        // Unreachable, reset or timed out: what /v1/messages answers for the same (the caller's
        // own key, so the transport's words are kept).
        throw new GatewayError('provider_error', `The provider failed (502): upstream connection failed: ${(err as Error).message}`);
      }
      if (status !== 200) {
        const why = `vendor C refused the count (${status}): ${text.slice(0, 300)}`;
        throw new GatewayError(status >= 500 ? 'provider_error' : 'provider_rejected', why, status < 500 ? { status } : {});
      }
      let counted: Record<string, unknown>;
      try { counted = JSON.parse(text) as Record<string, unknown>; } catch {
        throw new GatewayError('provider_error', 'vendor C answered the count with a body that is not JSON.');
      }
      return sendJson(res, 200, JSON.stringify({ ...counted, counted_by: 'vendor_c' }), { 'x-service-served-provider': 'vendor_c' });
    }
    sendJson(res, 200, JSON.stringify({ input_tokens: estimateTokens(bytes.length, body.messages), counted_by: 'gateway_estimate' }));
  } catch (err) {
    const ge = asGatewayError(err);
    if (ge.code === 'internal_error') svc.log.error({ req: line.req, endpoint: line.endpoint, org: line.org, err }, 'internal error');
    if (!res.headersSent && !res.destroyed) sendError(res, 'messages', ge);
    line.status = ge.status;
    line.code = ge.code;
  } finally {
    line.ms = svc.clock.now() - t0;
    // Counted (a vendor C call, or the estimate) or refused before the count.
    recordAnswer(svc, line, line.route || line.status === 200 ? 'request' : 'refused');
  }
}

// ---------- the estimate ----------

/** An image of unknown size, and the most any image costs: Anthropic scales an image down to about
 *  1.15 megapixels (long edge 1568 px) and counts width × height / 750, so ≈ 1,600 at most. */
export const IMAGE_MAX_TOKENS = 1_600;
/** A PDF page: Anthropic's 1,500–3,000 text tokens per page, at the dense end (each page is also
 *  shown to the model as an image, which the text figure's upper end stands in for). */
export const PDF_PAGE_TOKENS = 3_000;
/** A PDF whose pages cannot be counted (page objects inside compressed object streams, a URL or
 *  file reference) counts one page per started 100 KB of it, and one page when its size is unknown. */
const PDF_BYTES_PER_UNCOUNTED_PAGE = 100_000;

/** The body's bytes / 4, as admission estimates a prompt (text, JSON and all), except that each
 *  image and PDF counts its own figure instead of its base64 bytes (a 150 KB image is ≈ 1,600
 *  tokens to Claude, not 50,000). */
export function estimateTokens(bodyBytes: number, messages: unknown): number {
  const media = { bytes: 0, tokens: 0 };
  if (Array.isArray(messages)) for (const message of messages) mediaIn((message as any)?.content, media);
  return Math.ceil(Math.max(0, bodyBytes - media.bytes) / 4) + media.tokens;
}

/** Adds the images and documents of a block list (tool results and content documents nest their
 *  own) to `acc`: the base64 bytes they replace and the tokens they count. */
function mediaIn(blocks: unknown, acc: { bytes: number; tokens: number }): void {
  if (!Array.isArray(blocks)) return;
  for (const block of blocks as any[]) {
    const source = block?.source;
    const data = source?.type === 'base64' && typeof source.data === 'string' ? source.data as string : undefined;
    if (block?.type === 'image') {
      acc.bytes += data?.length ?? 0;
      acc.tokens += data ? imageTokens(data) : IMAGE_MAX_TOKENS;
    } else if (block?.type === 'document') {
      if (source?.type === 'content') { mediaIn(source.content, acc); continue; }
      // Plain text (a text source, or base64 that is not a PDF): its bytes count as text.
      if (source?.type === 'text' || (data && source.media_type !== undefined && source.media_type !== 'application/pdf')) continue;
      acc.bytes += data?.length ?? 0;
      acc.tokens += pdfPages(data) * PDF_PAGE_TOKENS;
    } else if (block?.type === 'tool_result') mediaIn(block.content, acc);
  }
}

/** width × height / 750 when the image's header gives its size, at most IMAGE_MAX_TOKENS. */
function imageTokens(base64: string): number {
  const size = imageSize(Buffer.from(base64.slice(0, 96_000), 'base64'));
  return size ? Math.min(IMAGE_MAX_TOKENS, Math.max(1, Math.ceil((size[0] * size[1]) / 750))) : IMAGE_MAX_TOKENS;
}

/** [width, height] from a PNG, GIF, JPEG or WebP header; undefined for anything else. */
export function imageSize(b: Buffer): [number, number] | undefined {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR') {
    return [b.readUInt32BE(16), b.readUInt32BE(20)];
  }
  if (b.length >= 10 && b.toString('latin1', 0, 4) === 'GIF8') return [b.readUInt16LE(6), b.readUInt16LE(8)];
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') {
    const chunk = b.toString('latin1', 12, 16);
    if (chunk === 'VP8X') return [1 + b.readUIntLE(24, 3), 1 + b.readUIntLE(27, 3)];
    if (chunk === 'VP8 ') return [b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff];
    if (chunk === 'VP8L') { const bits = b.readUInt32LE(21); return [1 + (bits & 0x3fff), 1 + ((bits >> 14) & 0x3fff)]; }
    return undefined;
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    // Segments up to the first start-of-frame (SOF0–SOF15 but DHT C4, JPG C8, DAC CC), which holds the size.
    for (let at = 2; at + 9 <= b.length && b[at] === 0xff;) {
      const marker = b[at + 1]!;
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return [b.readUInt16BE(at + 7), b.readUInt16BE(at + 5)];
      }
      at += 2 + b.readUInt16BE(at + 2);
    }
  }
  return undefined;
}

/** A PDF's pages: its page objects (`/Type /Page`) when they are readable, else one per started
 *  100 KB; one for a PDF given by URL or file id (its size unknown). */
function pdfPages(base64: string | undefined): number {
  if (!base64) return 1;
  const pdf = Buffer.from(base64, 'base64');
  const pages = pdf.toString('latin1').match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0;
  return pages || Math.max(1, Math.ceil(pdf.length / PDF_BYTES_PER_UNCOUNTED_PAGE));
}
