// POST /v1/messages/count_tokens for every model of the catalog (the Anthropic SDK's
// messages.countTokens; Claude Code and other agents call it). A vendor C model, for an
// organization with its own vendor C key, is counted by vendor C; anything else by the gateway
// with the estimate admission already uses (⌈body bytes / 4⌉). `counted_by` says which:
// "vendor_c" or "gateway_estimate". Auth, abuse limits, the body cap and the Messages error
// envelope apply as on /v1/messages; nothing is generated, so no start_within, hold or charge.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors.ts';
import type { Services } from '../services.ts';
import { guard } from './auth.ts';
import { parseJsonObject, readBody, requestBodyLimits } from './body.ts';
import { asGatewayError, sendError, sendJson } from './reply.ts';
import { checkCountTokens } from '../routing/validate.ts';

export async function handleCountTokens(req: IncomingMessage, res: ServerResponse, svc: Services): Promise<void> {
  try {
    const key = await guard(req, svc);
    const bytes = await readBody(req, requestBodyLimits(svc));
    const { model, body, betas } = checkCountTokens(parseJsonObject(bytes), svc.catalog, req.headers);
    const own = model.family === 'vendor_c' ? await svc.orgs.providerKey(key.orgId, 'vendor_c') : undefined;
    const counter = svc.adapters.vendor_c.countTokens;
    if (own !== undefined && counter) {
      const upstream = counter({ body: { ...body, model: model.route_model_ids?.vendor_c ?? model.id }, credential: own, betas });
      const timeouts = svc.config.timeouts;
      const reply = await svc.pools.get('vendor_c', upstream.origin).request({
        method: 'POST', path: upstream.path, headers: upstream.headers, body: upstream.body,
        headersTimeout: timeouts.upstream_first_byte_ms, bodyTimeout: timeouts.upstream_idle_ms,
      });
      const text = await reply.body.text();
      const status = reply.statusCode;
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
    sendJson(res, 200, JSON.stringify({ input_tokens: Math.ceil(bytes.length / 4), counted_by: 'gateway_estimate' }));
  } catch (err) {
    const ge = asGatewayError(err);
    if (ge.code === 'internal_error') svc.log.error({ err }, 'internal error');
    if (!res.headersSent && !res.destroyed) sendError(res, 'messages', ge);
  }
}
