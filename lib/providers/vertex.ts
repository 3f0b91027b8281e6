// cloud_a: Gemini on Vertex AI (generateContent / streamGenerateContent?alt=sse). The org's cloud
// key is a service-account JSON; google-auth-library mints and caches the OAuth access token.
// A service account whose token_uri is not Google's (a private endpoint, or the simulator) gets
// its tokens there: the library's transporter is pointed at that URI.
import { createHash } from 'node:crypto';
import type { JWT, JWTOptions } from 'google-auth-library';
import type { RouteAdapter } from './types.ts';
import { originAndBase } from './url.ts';
import { GatewayError } from '../errors.ts';

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** The documented shape of a cloud_a key: {"key": <service-account JSON>, "project"?, "location"?}. */
export interface VertexCredential {
  key: ServiceAccount | string;
  project?: string;
  location?: string;
}

/** The fields of a Google service-account JSON the gateway reads. */
interface ServiceAccount { client_email: string; private_key: string; project_id?: string; token_uri?: string }

const clients = new Map<string, JWT>();

// google-auth-library and gaxios are loaded on the first cloud_a call, not at start: together
// they are ≈ 16 MB of resident memory a gateway without cloud_a traffic never needs.
async function jwtFor(sa: ServiceAccount): Promise<JWT> {
  const id = createHash('sha256').update(sa.client_email + '\0' + sa.private_key + '\0' + (sa.token_uri ?? '')).digest('hex');
  let client = clients.get(id);
  if (!client) {
    const [{ JWT }, { Gaxios }] = await Promise.all([import('google-auth-library'), import('gaxios')]);
    const transporter = new Gaxios();
    if (sa.token_uri && sa.token_uri !== GOOGLE_TOKEN_URL) {
      const uri = sa.token_uri;
      transporter.interceptors.request.add({
        resolved: async (cfg) => (String(cfg.url) === GOOGLE_TOKEN_URL ? { ...cfg, url: new URL(uri) } : cfg),
      });
    }
    client = new JWT({
      email: sa.client_email,
      key: sa.private_key,
      scopes: ["https://www.googleapis.com/auth/cloud-platform"],
      transporter: transporter as unknown as JWTOptions["transporter"],
    });
    clients.set(id, client);
  }
  return client;
}

export function parseVertexCredential(raw: unknown): { sa: ServiceAccount; project: string; location: string } {
  const credential = raw as VertexCredential;
  let sa: any;
  // A parse error's message quotes the text's first bytes (key material): a fixed message instead.
  try { sa = typeof credential?.key === 'string' ? JSON.parse(credential.key) : credential?.key; } catch { sa = undefined; }
  if (!sa?.client_email || !sa?.private_key) {
    throw new GatewayError('provider_key_missing', 'The cloud_a key must be {"key": <service-account JSON>, "project"?, "location"?}.');
  }
  const project = credential.project ?? sa.project_id;
  if (!project) throw new GatewayError('provider_key_missing', 'The cloud_a key names no project.');
  return { sa, project, location: credential.location ?? 'us-central1' };
}

export function cloudA(baseUrl: string): RouteAdapter {
  const { origin, base } = originAndBase(baseUrl);
  return {
    route: 'cloud_a',
    wires: ['vertex'],
    flex: false,
    async build({ body, model, stream, credential }) {
      const { sa, project, location } = parseVertexCredential(credential);
      const { token } = await (await jwtFor(sa)).getAccessToken();
      const verb = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
      return {
        origin,
        path: `${base}/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}`
          + `/publishers/google/models/${encodeURIComponent(model)}:${verb}`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      };
    },
  };
}
