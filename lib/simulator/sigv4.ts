// AWS SigV4 on the Bedrock route: the Authorization header must be well formed
// (`AWS4-HMAC-SHA256 Credential=AKID/date/region/bedrock/aws4_request, SignedHeaders=…,
// Signature=<64 hex>`) with an x-amz-date. With `awsSecrets` the signature is recomputed with
// @smithy/signature-v4 over exactly the signed headers and compared; without it any AKID passes.
import type { IncomingHttpHeaders } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';

const AUTH = /^AWS4-HMAC-SHA256 Credential=([^/\s]+)\/(\d{8})\/([^/\s]+)\/([^/\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;_.-]+),\s*Signature=([0-9a-f]{64})$/;

export interface SigV4Request {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** undefined when accepted, else the reason. */
export async function checkSigV4(req: SigV4Request, secrets: Record<string, string> | undefined): Promise<string | undefined> {
  const auth = typeof req.headers.authorization === 'string' ? req.headers.authorization.trim() : '';
  const m = AUTH.exec(auth);
  if (!m) return 'Missing or malformed Authorization header: expected an AWS Signature Version 4 signature.';
  const [, akid, date, region, service, signedList, signature] = m as unknown as string[];
  if (service !== 'bedrock') return `Credential should be scoped to correct service: 'bedrock'.`;
  const amzDate = req.headers['x-amz-date'];
  if (typeof amzDate !== 'string' || !/^\d{8}T\d{6}Z$/.test(amzDate) || !amzDate.startsWith(date!)) {
    return 'Missing or invalid X-Amz-Date header.';
  }
  if (!secrets) return undefined;
  const secret = Object.hasOwn(secrets, akid!) ? secrets[akid!] : undefined;
  if (secret === undefined) return 'The security token included in the request is invalid.';

  const signed = signedList!.split(';');
  const headers: Record<string, string> = {};
  for (const name of signed) {
    const v = req.headers[name];
    if (v === undefined) return `Signed header ${name} is missing.`;
    headers[name] = Array.isArray(v) ? v.join(',') : String(v);
  }
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(req.query.keys())) {
    const all = req.query.getAll(key);
    query[key] = all.length === 1 ? all[0]! : all;
  }
  const signer = new SignatureV4({
    service: service!, region: region!, sha256: Sha256, applyChecksum: false,
    credentials: {
      accessKeyId: akid!, secretAccessKey: secret,
      sessionToken: typeof req.headers['x-amz-security-token'] === 'string' ? req.headers['x-amz-security-token'] : undefined,
    },
  });
  const resigned = await signer.sign(
    { method: req.method, protocol: 'https:', hostname: headers.host ?? '', path: req.path, query, headers, body: req.body },
    { signingDate: parseAmzDate(amzDate), signableHeaders: new Set(signed) },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(resigned.headers.authorization ?? ''))?.[1] ?? '';
  const ok = expected.length === 64 && timingSafeEqual(Buffer.from(expected), Buffer.from(signature!));
  return ok ? undefined : 'The request signature we calculated does not match the signature you provided.';
}

function parseAmzDate(v: string): Date {
  return new Date(`${v.slice(0, 4)}-${v.slice(4, 6)}-${v.slice(6, 8)}T${v.slice(9, 11)}:${v.slice(11, 13)}:${v.slice(13, 15)}Z`);
}
