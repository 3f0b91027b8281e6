// The OAuth2 token endpoint cloud_a's credentials point at (POST /token): a JWT-bearer grant
// (form-encoded grant_type + assertion, as google-auth-library sends for a service account)
// is exchanged for a `sim-…` access token. The JWT must be well formed; its signature is not
// checked. Vertex requests must carry a token issued here and not yet expired.
import type { Rng } from './rng.ts';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const LIFETIME_S = 3600;

export interface TokenReply { status: number; body: Record<string, unknown> }

export class TokenIssuer {
  private readonly issued = new Map<string, number>(); // token → expiry (ms since epoch)
  constructor(private readonly rng: Rng) {}

  exchange(form: string): TokenReply {
    const params = new URLSearchParams(form);
    if (params.get('grant_type') !== JWT_BEARER) {
      return { status: 400, body: { error: 'unsupported_grant_type', error_description: 'Invalid grant_type: expected jwt-bearer.' } };
    }
    if (!isWellFormedJwt(params.get('assertion') ?? '')) {
      return { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT: assertion is not a well-formed JWT.' } };
    }
    const token = `sim-${this.rng.chars(32)}`;
    this.issued.set(token, Date.now() + LIFETIME_S * 1000);
    return { status: 200, body: { access_token: token, expires_in: LIFETIME_S, token_type: 'Bearer' } };
  }

  isIssued(token: string): boolean {
    const expiry = this.issued.get(token);
    if (expiry === undefined) return false;
    if (expiry > Date.now()) return true;
    this.issued.delete(token);
    return false;
  }
}

/** Three base64url segments; header and claims decode to JSON objects; signature non-empty. */
function isWellFormedJwt(jwt: string): boolean {
  const parts = jwt.split('.');
  if (parts.length !== 3 || !parts.every((p) => /^[A-Za-z0-9_-]+={0,2}$/.test(p))) return false;
  try {
    for (const p of parts.slice(0, 2)) {
      const json: unknown = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
      if (typeof json !== 'object' || json === null || Array.isArray(json)) return false;
    }
  } catch { return false; }
  return true;
}
