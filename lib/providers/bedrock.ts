// cloud_b: the vendor C family on AWS Bedrock (InvokeModelWithResponseStream). The body is the
// Messages body without model and stream, plus anthropic_version; requests are SigV4-signed with
// @smithy/signature-v4 and the binary event stream is decoded with @smithy/eventstream-codec —
// each chunk's base64 payload is one Anthropic event, re-framed as SSE for the shared stream code.
import { SignatureV4 } from '@smithy/signature-v4';
import { HttpRequest } from '@smithy/protocol-http';
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { Framer, RouteAdapter } from './types.ts';
import { originAndBase } from './url.ts';
import { upstreamJson } from './json-body.ts';
import { formatFrame, type RawFrame } from '../sse.ts';
import { GatewayError } from '../errors.ts';
import { MESSAGES_BETAS } from '../formats/messages/betas.ts';

/** The documented shape of a cloud_b key. */
export interface BedrockCredential {
  key: { access_key_id: string; secret_access_key: string; session_token?: string };
  region?: string;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

export function parseBedrockCredential(raw: unknown): { keys: BedrockCredential['key']; region: string } {
  const credential = raw as BedrockCredential;
  if (!credential?.key?.access_key_id || !credential.key.secret_access_key) {
    const shape = '{"key": {"access_key_id", "secret_access_key", "session_token"?}, "region"?}';
    throw new GatewayError('provider_key_missing', `The cloud_b key must be ${shape}.`);
  }
  return { keys: credential.key, region: credential.region ?? 'us-east-1' };
}

export function cloudB(baseUrl: string, defaultMaxTokens: number): RouteAdapter {
  const { origin, base } = originAndBase(baseUrl);
  const url = new URL(origin);
  return {
    route: 'cloud_b',
    wires: ['messages'],
    flex: false,
    async build({ body, model, stream, credential, betas }) {
      const { keys, region } = parseBedrockCredential(credential);
      const { model: _m, stream: _s, service_tier: _t, ...rest } = body;
      const out: Record<string, unknown> = {
        ...rest, anthropic_version: 'bedrock-2023-05-31', max_tokens: rest.max_tokens ?? defaultMaxTokens,
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

/** Splits the binary event stream into messages (u32 total length prefix) and turns each into an
 *  Anthropic SSE frame: chunk events carry {"bytes": base64(event JSON)}; exceptions become an
 *  Anthropic error event naming the exception. */
export class EventStreamFramer implements Framer {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): RawFrame[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: RawFrame[] = [];
    while (this.buf.length >= 4) {
      const total = this.buf.readUInt32BE(0);
      if (this.buf.length < total) break;
      const msg = codec.decode(this.buf.subarray(0, total));
      this.buf = this.buf.subarray(total);
      const type = msg.headers[':message-type']?.value;
      let json: string;
      if (type === 'event') {
        const payload = JSON.parse(toUtf8(msg.body));
        json = Buffer.from(String(payload.bytes ?? ''), 'base64').toString('utf8');
      } else {
        const name = String(msg.headers[':exception-type']?.value ?? msg.headers[':error-code']?.value ?? 'exception');
        const errorType = name === 'throttlingException' ? 'rate_limit_error' : 'api_error';
        json = JSON.stringify({ type: 'error', error: { type: errorType, message: name } });
      }
      const event = (JSON.parse(json) as { type?: string }).type ?? 'message';
      out.push({ event, data: json, raw: Buffer.from(formatFrame(json, event)) });
    }
    return out;
  }

  end(): RawFrame[] { return []; }
}
