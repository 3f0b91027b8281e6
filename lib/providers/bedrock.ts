// cloud_b: the vendor C family on AWS Bedrock (InvokeModelWithResponseStream). The body is the
// Messages body without model and stream, plus anthropic_version; requests are SigV4-signed with
// @smithy/signature-v4 and the binary event stream is decoded with @smithy/eventstream-codec —
// each chunk's base64 payload is one Anthropic event, re-framed as SSE for the shared stream code.
import { SignatureV4 } from '@smithy/signature-v4';
import { HttpRequest } from '@smithy/protocol-http';
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { Failure, Framer, RouteAdapter } from './types.ts';
import { originAndBase } from './url.ts';
import { upstreamJson } from './json-body.ts';
import { formatFrame, MAX_FRAME_BYTES, type RawFrame } from '../sse.ts';
import { GatewayError } from '../errors.ts';
import { MESSAGES_BETAS } from '../formats/messages/betas.ts';
import { maxTokensFor } from '../formats/messages/thinking.ts';

/** The documented shape of a cloud_b key. */
export interface BedrockCredential {
  key: { access_key_id: string; secret_access_key: string; session_token?: string };
  region?: string;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** An AWS region name (us-east-1, us-gov-west-1, cn-north-1): it becomes part of a host name. */
const REGION = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** `defaultRegion`: the region of a key that names none. */
export function parseBedrockCredential(
  raw: unknown, defaultRegion = 'us-east-1',
): { keys: BedrockCredential['key']; region: string } {
  const credential = raw as BedrockCredential;
  if (!credential?.key?.access_key_id || !credential.key.secret_access_key) {
    const shape = '{"key": {"access_key_id", "secret_access_key", "session_token"?}, "region"?}';
    throw new GatewayError('provider_key_missing', `The cloud_b key must be ${shape}.`);
  }
  const region = credential.region ?? defaultRegion;
  if (typeof region !== 'string' || region.length > 64 || !REGION.test(region)) {
    throw new GatewayError('provider_key_missing', 'The cloud_b key\'s region is not an AWS region name.');
  }
  return { keys: credential.key, region };
}

/** Bedrock's public runtime endpoints, one per region: bedrock-runtime[-fips].{region}.amazonaws.com[.cn]. */
const PUBLIC_HOST = /^(bedrock-runtime(?:-fips)?)\.([a-z0-9-]+)\.(amazonaws\.com(?:\.cn)?)$/;

/** Where a request signed for `region` goes. A base URL on Bedrock's public endpoint names one
 *  region's host, but AWS refuses a signature whose region is not the endpoint's: the request goes
 *  to the key's region's host (the configured one's region is the default of a key that names
 *  none). Any other base URL (a proxy, a VPC endpoint, the simulator) is where every request goes. */
export function bedrockEndpoint(baseUrl: string): { defaultRegion: string; at(region: string): { origin: string; url: URL } } {
  const { origin, base } = originAndBase(baseUrl);
  const url = new URL(origin);
  const match = url.protocol === 'https:' && !url.port && !base ? PUBLIC_HOST.exec(url.hostname) : null;
  if (!match) return { defaultRegion: 'us-east-1', at: () => ({ origin, url }) };
  const [, service, configured, domain] = match;
  const hosts = new Map<string, { origin: string; url: URL }>();
  return {
    defaultRegion: configured!,
    at(region) {
      let host = hosts.get(region);
      if (!host) {
        const regional = `https://${service}.${region}.${domain}`;
        host = { origin: regional, url: new URL(regional) };
        if (hosts.size < 64) hosts.set(region, host);   // AWS has a few dozen regions
      }
      return host;
    },
  };
}

export function cloudB(baseUrl: string, defaultMaxTokens: number): RouteAdapter {
  const { base } = originAndBase(baseUrl);
  const endpoint = bedrockEndpoint(baseUrl);
  return {
    route: 'cloud_b',
    wires: ['messages'],
    flex: false,
    async build({ body, model, stream, credential, betas }) {
      const { keys, region } = parseBedrockCredential(credential, endpoint.defaultRegion);
      const { origin, url } = endpoint.at(region);
      const { model: _m, stream: _s, service_tier: _t, ...rest } = body;
      const out: Record<string, unknown> = {
        ...rest, anthropic_version: 'bedrock-2023-05-31', max_tokens: rest.max_tokens ?? maxTokensFor(rest, defaultMaxTokens),
      };
      const bedrockBetas = betas?.filter((beta) => MESSAGES_BETAS[beta]?.bedrock) ?? [];
      if (bedrockBetas.length) out.anthropic_beta = bedrockBetas;   // Bedrock takes betas in the body
      const path = `${base}/model/${encodeURIComponent(model)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`;
      const payload = upstreamJson(out);
      const signer = new SignatureV4({
        service: 'bedrock', region, sha256: Sha256,
        credentials: { accessKeyId: keys.access_key_id, secretAccessKey: keys.secret_access_key, sessionToken: keys.session_token },
      });
      const signed = await signer.sign(new HttpRequest({
        method: 'POST', protocol: url.protocol, hostname: url.hostname, port: url.port ? Number(url.port) : undefined, path,
        headers: {
          host: url.host, 'content-type': 'application/json', accept: stream ? 'application/vnd.amazon.eventstream' : 'application/json',
        },
        body: payload,
      }));
      return { origin, path, headers: signed.headers as Record<string, string>, body: payload };
    },
    framer: () => new EventStreamFramer(),
  };
}

/** What an exception message as a stream's first message means, by its name (`:exception-type`,
 *  compared lower-cased): AWS's documented HTTP status for the exception, and whether another try
 *  can succeed. One not listed is taken as the provider's failure (502, transient). */
const EXCEPTIONS = new Map<string, Pick<Failure, 'kind' | 'status'>>([
  ['throttlingexception', { kind: 'transient', status: 429 }],
  ['modelnotreadyexception', { kind: 'transient', status: 429 }],
  ['serviceunavailableexception', { kind: 'transient', status: 503 }],
  ['modeltimeoutexception', { kind: 'transient', status: 408 }],
  ['internalserverexception', { kind: 'transient', status: 500 }],
  ['modelstreamerrorexception', { kind: 'transient', status: 424 }],   // "Retry your request."
  ['modelerrorexception', { kind: 'fatal', status: 424 }],
  ['validationexception', { kind: 'fatal', status: 400 }],
  ['servicequotaexceededexception', { kind: 'fatal', status: 400 }],
  ['accessdeniedexception', { kind: 'fatal', status: 403 }],
  ['resourcenotfoundexception', { kind: 'fatal', status: 404 }],
]);
const UNKNOWN_EXCEPTION: Pick<Failure, 'kind' | 'status'> = { kind: 'transient', status: 502 };

/** The shortest message: its prelude (two lengths and their checksum) and its own checksum. */
const MIN_MESSAGE_BYTES = 16;
/** Pieces of a message kept as they came are joined this many at a time (as lib/sse.ts does): a
 *  provider writing a few bytes at a time costs one list slot per this many chunks. */
const JOIN_EVERY = 64;

/** An exception message, re-framed as the Anthropic error event it is after commit, with the
 *  failure it is before (Framer.refusal). */
interface ExceptionFrame extends RawFrame { failure: Failure }

/** Splits the binary event stream into messages (u32 total length prefix) and turns each into an
 *  Anthropic SSE frame: chunk events carry {"bytes": base64(event JSON)}; exceptions become an
 *  Anthropic error event naming the exception. */
export class EventStreamFramer implements Framer {
  /** The start of a message whose end has not come, in the pieces it came in: joined once, when
   *  the message is whole (joined to every chunk instead, a message split finely was copied once
   *  per piece: the square of its size). */
  private parts: Buffer[] = [];
  /** How many of `parts`' first pieces are already JOIN_EVERY pieces joined. */
  private joined = 0;
  private held = 0;
  /** The held message's length, from its prelude; 0 until its first four bytes are here. */
  private total = 0;

  push(chunk: Buffer): RawFrame[] {
    const out: RawFrame[] = [];
    let buf = chunk;
    if (this.held) {
      this.parts.push(chunk);
      this.held += chunk.length;
      if (!this.total) {
        if (this.held < 4) return out;
        if (this.parts[0]!.length < 4) { this.parts = [Buffer.concat(this.parts, this.held)]; this.joined = 0; }   // a length cut in two
        this.total = messageLength(this.parts[0]!, 0);
      }
      if (this.held < this.total) {
        if (this.parts.length - this.joined >= JOIN_EVERY) {
          this.parts.push(Buffer.concat(this.parts.splice(this.joined)));
          this.joined = this.parts.length;
        }
        return out;
      }
      buf = Buffer.concat(this.parts, this.held);
      this.parts = [];
      this.held = this.total = this.joined = 0;
    }
    let at = 0;
    while (buf.length - at >= 4) {
      const total = messageLength(buf, at);
      if (buf.length - at < total) break;
      out.push(frameOf(buf.subarray(at, at + total)));
      at += total;
    }
    if (at < buf.length) {
      // A copy: a message waiting for its next chunk must not keep the whole chunk it came in alive.
      const rest = Buffer.from(buf.subarray(at));
      this.parts.push(rest);
      this.held = rest.length;
      if (rest.length >= 4) this.total = rest.readUInt32BE(0);
    }
    return out;
  }

  end(): RawFrame[] { return []; }

  refusal(frame: RawFrame): Failure | undefined {
    return (frame as Partial<ExceptionFrame>).failure;
  }
}

/** The length the prelude at `at` announces; past the bounds the upstream is malformed (the
 *  stream fails and is aborted, as an SSE event past MAX_FRAME_BYTES does), not waited for. */
function messageLength(buf: Buffer, at: number): number {
  const total = buf.readUInt32BE(at);
  if (total > MAX_FRAME_BYTES) throw new Error(`an upstream event-stream message announced ${total} bytes, past the ${MAX_FRAME_BYTES} one may hold`);
  if (total < MIN_MESSAGE_BYTES) throw new Error(`an upstream event-stream message announced ${total} bytes, fewer than its prelude and checksums`);
  return total;
}

function frameOf(message: Buffer): RawFrame {
  const msg = codec.decode(message);
  const type = msg.headers[':message-type']?.value;
  if (type === 'event') {
    const payload = JSON.parse(toUtf8(msg.body));
    const json = Buffer.from(String(payload.bytes ?? ''), 'base64').toString('utf8');
    const event = (JSON.parse(json) as { type?: string }).type ?? 'message';
    return { event, data: json, raw: Buffer.from(formatFrame(json, event)) };
  }
  const name = String(msg.headers[':exception-type']?.value ?? msg.headers[':error-code']?.value ?? 'exception');
  const errorType = name === 'throttlingException' ? 'rate_limit_error' : 'api_error';
  const json = JSON.stringify({ type: 'error', error: { type: errorType, message: name } });
  const frame = { event: 'error', data: json, raw: Buffer.from(formatFrame(json, 'error')) } as ExceptionFrame;
  frame.failure = { ...(EXCEPTIONS.get(name.toLowerCase()) ?? UNKNOWN_EXCEPTION), message: exceptionMessage(msg.body, name), upstreamCode: name };
  return frame;
}

/** The exception's own words ({"message": …} in its payload), else its name. */
function exceptionMessage(body: Uint8Array, name: string): string {
  try {
    const message = (JSON.parse(toUtf8(body)) as { message?: unknown })?.message;
    if (typeof message === 'string' && message) return `${name}: ${message.slice(0, 500)}`;
  } catch { /* not JSON: the name says it */ }
  return name;
}
