// Shared test helpers: start a simulator per test file, read SSE and AWS event-stream bodies,
// validate against JSON Schema (ajv), and build the credentials each route wants.
import { createHmac } from 'node:crypto';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import AjvModule from 'ajv';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../lib/simulator/server.ts';
import { SSEParser } from '../../lib/sse.ts';
import { waitFor } from '../helpers/wait.ts';
import { OWN_FIXTURES } from '../helpers/recorded.ts';

/** A simulator on port 0 whose `replay` reads the project's own fixtures unless told otherwise. */
export function start(opts: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator({ fixturesDir: OWN_FIXTURES, ...opts });
}

export interface SSE { event?: string; data: string }

/** Split an SSE body into frames with the gateway's own parser. */
export function parseSSE(text: string): SSE[] {
  const p = new SSEParser();
  return [...p.push(Buffer.from(text)), ...p.end()].map(({ event, data }) => (event === undefined ? { data } : { event, data }));
}

export interface EventStreamMessage { headers: Record<string, string>; body: string }

/** Decode a whole AWS event-stream body with the same codec the AWS SDKs use. Each message
 *  starts with its total length (u32 big-endian), which is how the body is split. */
export function decodeEventStream(bytes: Uint8Array): EventStreamMessage[] {
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: EventStreamMessage[] = [];
  for (let at = 0; at < bytes.byteLength;) {
    const length = view.getUint32(at);
    const msg = codec.decode(bytes.subarray(at, at + length));
    at += length;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(msg.headers)) headers[k] = String(v.value);
    out.push({ headers, body: toUtf8(msg.body) });
  }
  return out;
}

const Ajv = AjvModule.default ?? AjvModule;
const ajv = new (Ajv as unknown as typeof AjvModule.default)({ strict: false, allErrors: true });

/** Throws with ajv's messages when `value` does not satisfy `schema`. */
export function assertSatisfies(schema: object, value: unknown): void {
  const validate = ajv.compile(schema);
  if (!validate(value)) throw new Error(`schema violation: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value)}`);
}

/** A well-formed (unsigned-checked) service-account JWT for the /token endpoint. */
export function fakeJwt(): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = b64({ alg: 'RS256', typ: 'JWT' });
  const claims = b64({ iss: 'sa@sim.iam.gserviceaccount.com', scope: 'https://www.googleapis.com/auth/cloud-platform', aud: 'sim', exp: 2e9, iat: 1e9 });
  return `${head}.${claims}.${createHmac('sha256', 'k').update(head + claims).digest('base64url')}`;
}

export async function vertexToken(sim: Simulator): Promise<string> {
  const res = await fetch(`${sim.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: fakeJwt() }),
  });
  const body = await res.json() as { access_token: string };
  return body.access_token;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll until `cond` holds (for counters updated when a socket closes). */
export const eventually = (cond: () => boolean, timeoutMs = 2000): Promise<void> => waitFor(cond, 'condition', timeoutMs);

export { sim as directive } from '../helpers/wait.ts';

/** A signed Bedrock streaming call whose user text is `text` (a directive): the text of each
 *  event-stream chunk, decoded from its base64 `bytes`. */
export async function bedrockChunkTexts(sim: Simulator, text: string): Promise<string[]> {
  const url = new URL(`${sim.url}/model/claude/invoke-with-response-stream`);
  const payload = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 5, messages: [{ role: 'user', content: text }] });
  const signed = await new SignatureV4({ service: 'bedrock', region: 'us-east-1', sha256: Sha256, credentials: { accessKeyId: 'AK', secretAccessKey: 's' } })
    .sign({ method: 'POST', protocol: 'http:', hostname: url.hostname, path: url.pathname, query: {}, headers: { host: url.host }, body: payload });
  const res = await fetch(url, { method: 'POST', headers: signed.headers as Record<string, string>, body: payload });
  return decodeEventStream(new Uint8Array(await res.arrayBuffer()))
    .map((m) => Buffer.from((JSON.parse(m.body) as { bytes: string }).bytes, 'base64').toString('utf8'));
}
