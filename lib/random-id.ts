// Random ids for what the gateway names itself (response, message and call ids): bytes from a
// pool that one randomFillSync() refills 4 KiB at a time, as node's randomUUID() keeps its own.
// A randomBytes() call per id was a call into OpenSSL and a fresh Buffer each time: 5 µs of every
// translated Chat stream under load (bench/README.md). The bytes are as random; none is used twice.
import { randomFillSync } from 'node:crypto';

const POOL = Buffer.allocUnsafe(4096);
let at = POOL.length;

/** `bytes` fresh random bytes (at most 4,096), written in `encoding`. */
export function randomString(bytes: number, encoding: 'hex' | 'base64url'): string {
  if (at + bytes > POOL.length) {
    randomFillSync(POOL);
    at = 0;
  }
  const text = POOL.toString(encoding, at, at + bytes);
  at += bytes;
  return text;
}
