// Reads a request body up to the cap, counting while it streams: a declared Content-Length over
// the cap is refused before a byte is read, and an undeclared one as soon as it passes the cap.
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors.ts';

export const BODY_CAP = 50_000_000;

export function readBody(req: IncomingMessage, cap = BODY_CAP): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > cap) return Promise.reject(new GatewayError('request_too_large'));
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size > cap) {
        req.off('data', onData);
        req.pause();
        reject(new GatewayError('request_too_large'));
        return;
      }
      parts.push(c);
    };
    req.on('data', onData);
    req.once('end', () => resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size)));
    req.once('error', reject);
    req.once('aborted', () => reject(new GatewayError('client_closed_request')));
  });
}

export function parseJsonObject(buf: Buffer): Record<string, any> {
  let v: unknown;
  try { v = JSON.parse(buf.toString('utf8')); } catch { throw new GatewayError('invalid_json'); }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  return v as Record<string, any>;
}
