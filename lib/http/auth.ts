// Authentication exactly as the spec says: Bearer only; x-api-key alone → missing_api_key; a wrong
// or revoked key → invalid_api_key. On GET /v1/limits a missing key is invalid_api_key too.
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors.ts';
import type { ApiKeyRecord, OrgStore } from '../store/orgs.ts';
import type { Services } from '../services.ts';

type MissingCode = 'missing_api_key' | 'invalid_api_key';

export function bearerOf(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : '';
}

export async function authenticate(req: IncomingMessage, orgs: OrgStore, missingCode: MissingCode): Promise<ApiKeyRecord> {
  const token = bearerOf(req);
  if (token === undefined) throw new GatewayError(req.headers['x-api-key'] !== undefined ? 'missing_api_key' : missingCode);
  const key = token ? await orgs.findKey(token) : undefined;
  if (!key) throw new GatewayError('invalid_api_key');
  return key;
}

/** The guard every endpoint an organization calls runs first: the client address's rate and
 *  failed-authentication lockout (before the key is read, so 401s are no unlimited key-guessing
 *  oracle), the key, then the key's and organization's rates (`keyRate: false` skips those, for
 *  listings that cost nothing). A failed attempt counts against the address. */
export async function guard(
  req: IncomingMessage, svc: Services, opts: { missing?: MissingCode; keyRate?: boolean } = {},
): Promise<ApiKeyRecord> {
  const ip = svc.clientIp(req);
  const byIp = svc.abuse.checkIp(ip);
  if (!byIp.ok) throw new GatewayError('rate_limit_exceeded', undefined, { retryAfterS: byIp.retryAfterS });
  let key: ApiKeyRecord;
  try {
    key = await authenticate(req, svc.orgs, opts.missing ?? 'missing_api_key');
  } catch (err) {
    // A store that cannot be read is not a failed attempt of the caller's.
    if (!(err instanceof GatewayError) || err.code !== 'store_unavailable') svc.abuse.recordFailedAuth(ip);
    throw err;
  }
  if (opts.keyRate === false) return key;
  const byKey = svc.abuse.checkKey(key.orgId, key.id);
  if (!byKey.ok) throw new GatewayError('rate_limit_exceeded', undefined, { retryAfterS: byKey.retryAfterS });
  return key;
}
