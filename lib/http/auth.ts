// Authentication exactly as the spec says: Bearer only; x-api-key alone → missing_api_key; a wrong
// or revoked key → invalid_api_key. On GET /v1/limits a missing key is invalid_api_key too.
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors.ts';
import type { ApiKeyRecord, OrgStore } from '../store/orgs.ts';

export function bearerOf(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : '';
}

export async function authenticate(req: IncomingMessage, orgs: OrgStore, missingCode: 'missing_api_key' | 'invalid_api_key'): Promise<ApiKeyRecord> {
  const token = bearerOf(req);
  if (token === undefined) throw new GatewayError(req.headers['x-api-key'] !== undefined ? 'missing_api_key' : missingCode);
  const key = token ? await orgs.findKey(token) : undefined;
  if (!key) throw new GatewayError('invalid_api_key');
  return key;
}
