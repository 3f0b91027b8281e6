// Classifies an upstream refusal the way the official SDKs' retry policies do (408/409/429/5xx/529
// are transient), with flex capacity refusals (429/503 from the flex tier) set apart, and reads the
// wait the provider asked for: retry-after-ms, retry-after (seconds or HTTP date), Google RetryInfo.
import type { Tier } from '../routes.ts';
import type { Failure } from '../providers/types.ts';
import { UnusableCredential } from '../providers/unusable-credential.ts';

type Headers = Record<string, string | string[] | undefined>;

const BILLING = /insufficient_quota|billing|spend_limit|credit_balance/;

export function classify(status: number, headers: Headers, bodyText: string, tier: Tier, nowMs: number): Failure {
  let parsed: any;
  try { parsed = JSON.parse(bodyText); } catch { parsed = undefined; }
  const err = parsed?.error;
  // The provider's own name for the error: OpenAI's code, Anthropic's type, Google's status.
  const upstreamCode: string | undefined = [err?.code, err?.type, err?.status].find((name) => typeof name === 'string');
  const message = String(err?.message ?? parsed?.message ?? (bodyText.slice(0, 500) || `upstream status ${status}`));
  const retryAfterMs = retryAfter(headers, err, nowMs);
  // Billing and spend-cap 429s never succeed on retry. Every name the provider gives counts: OpenAI's
  // type says insufficient_quota where its code says credit_balance_exhausted, and Anthropic's spend
  // cap is a rate_limit_error named only in details.error_code (enforced_spend_limit_reached).
  const billing = [err?.code, err?.type, err?.details?.error_code].some((name) => typeof name === 'string' && BILLING.test(name));
  let kind: Failure['kind'];
  if (tier === 'flex' && (status === 429 || status === 503) && !billing) kind = 'capacity';
  else if ((status === 408 || status === 409 || status === 429 || status >= 500) && !billing) kind = 'transient';
  else kind = 'fatal';
  return billing ? { kind, status, message, retryAfterMs, upstreamCode, billing } : { kind, status, message, retryAfterMs, upstreamCode };
}

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function retryAfter(headers: Headers, err: any, nowMs: number): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = header(headers, 'retry-after');
  if (ra !== undefined) {
    if (/^\d+(\.\d+)?$/.test(ra.trim())) return Math.max(0, Number(ra) * 1000);
    const at = Date.parse(ra);
    if (!Number.isNaN(at)) return Math.max(0, at - nowMs);
  }
  const details: any[] = Array.isArray(err?.details) ? err.details : [];
  const info = details.find((detail) => typeof detail?.retryDelay === 'string');
  if (info) {
    const seconds = parseFloat(info.retryDelay);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  }
  return undefined;
}

/** A request that was not built or not sent. An unusable credential's message is its fixed one:
 *  a token server's answer never reaches the caller. One the gateway refused is fatal: a 400, since
 *  the organization's key, not the provider, is at fault; a token server's refusal stays transient. */
export function connectionFailure(err: Error): Failure {
  if (err instanceof UnusableCredential) {
    return err.retryable ? { kind: 'transient', status: 502, message: err.message } : { kind: 'fatal', status: 400, message: err.message };
  }
  return { kind: 'transient', status: 502, message: `upstream connection failed: ${err.message}` };
}
