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
import { IMAGE_MAX_TOKENS, PDF_PAGE_TOKENS, imageTokens, pdfPages } from '../routing/input-estimate.ts';

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
    // Vendor C counts only where the key may send the prompt: a key whose chain leaves it out (an
    // agent key that keeps traffic on Bedrock) gets the estimate.
    const keyChain = key.defaultProvider?.split(' ');
    const toVendorC = model.family === 'vendor_c' && (!keyChain || keyChain.includes('vendor_c'));
    const own = toVendorC ? await svc.orgs.providerKey(key.orgId, 'vendor_c') : undefined;
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

/** The body's bytes / 4, as admission estimates a prompt (text, JSON and all), except that each
 *  image and PDF counts its own figure instead of its base64 bytes (a 150 KB image is ≈ 1,600
 *  tokens to Claude, not 50,000), an image or PDF given by URL or file its most
 *  (lib/routing/input-estimate.ts has the figures and admission's estimate, found by shape). */
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
