// Classifies an upstream refusal the way the official SDKs' retry policies do (408/409/429/5xx/529
// are transient), with flex capacity refusals (429/503 from the flex tier) set apart, and reads the
// wait the provider asked for: retry-after-ms, retry-after (seconds or HTTP date), Google RetryInfo.
import type { Tier } from '../ir.ts';
import type { Failure } from '../providers/types.ts';

export function classify(status: number, headers: Record<string, string | string[] | undefined>, bodyText: string, tier: Tier, nowMs: number): Failure {
  let parsed: any;
  try { parsed = JSON.parse(bodyText); } catch { parsed = undefined; }
  const err = parsed?.error;
  const upstreamCode: string | undefined = typeof err?.code === 'string' ? err.code : typeof err?.type === 'string' ? err.type : typeof err?.status === 'string' ? err.status : undefined;
  const message = String(err?.message ?? parsed?.message ?? (bodyText.slice(0, 500) || `upstream status ${status}`));
  const retryAfterMs = retryAfter(headers, err, nowMs);
  // Billing and spend-cap 429s never succeed on retry.
  const billing = upstreamCode !== undefined && /insufficient_quota|billing|spend_limit/.test(upstreamCode);
  let kind: Failure['kind'];
  if (tier === 'flex' && (status === 429 || status === 503) && !billing) kind = 'capacity';
  else if ((status === 408 || status === 409 || status === 429 || status >= 500) && !billing) kind = 'transient';
  else kind = 'fatal';
  return { kind, status, message, retryAfterMs, upstreamCode };
}

function header(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

export function retryAfter(h: Record<string, string | string[] | undefined>, err: any, nowMs: number): number | undefined {
  const ms = header(h, 'retry-after-ms');
  if (ms !== undefined && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = header(h, 'retry-after');
  if (ra !== undefined) {
    if (/^\d+(\.\d+)?$/.test(ra.trim())) return Math.max(0, Number(ra) * 1000);
    const at = Date.parse(ra);
    if (!Number.isNaN(at)) return Math.max(0, at - nowMs);
  }
  const details: any[] = Array.isArray(err?.details) ? err.details : [];
  const info = details.find((d) => typeof d?.retryDelay === 'string');
  if (info) {
    const s = parseFloat(info.retryDelay);
    if (Number.isFinite(s)) return Math.max(0, s * 1000);
  }
  return undefined;
}

export const connectionFailure = (err: Error): Failure =>
  ({ kind: 'transient', status: 502, message: `upstream connection failed: ${err.message}` });
