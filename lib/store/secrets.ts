// Provider keys are encrypted at rest with AES-256-GCM. The key comes from GATEWAY_SECRET_KEY;
// without it a random key is generated once into the data folder (mode 0600) so `make run` works.
import { createCipheriv, createDecipheriv, createHash, createHmac, hash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A sealed value that none of the box's secrets opens (another secret sealed it, or it is damaged). */
export class UnreadableSecretError extends Error {
  constructor() { super('a sealed provider key does not open with GATEWAY_SECRET_KEY (nor any GATEWAY_SECRET_KEY_PREVIOUS)'); }
}

/** Seals with the current secret; opens with it or, during a rotation, with a previous one
 *  (README "Rotating GATEWAY_SECRET_KEY"). AES-GCM's tag tells a wrong key from the right one. */
export class SecretBox {
  private readonly keys: Buffer[];
  /** Which secret seals (`current`) and which still open (`previous`), by sealFingerprint. */
  readonly fingerprints: { current: string; previous: string[] };
  constructor(secret: string, previous: readonly string[] = []) {
    this.keys = [secret, ...previous].map((s) => createHash('sha256').update(s).digest());
    this.fingerprints = { current: sealFingerprint(secret), previous: previous.map(sealFingerprint) };
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys[0]!, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
  }

  open(sealed: string): string {
    return this.opened(sealed).plain;
  }

  /** The sealed value sealed again with the current secret, or undefined when it already is. */
  resealed(sealed: string): string | undefined {
    const { plain, current } = this.opened(sealed);
    return current ? undefined : this.seal(plain);
  }

  private opened(sealed: string): { plain: string; current: boolean } {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new UnreadableSecretError();
    for (const [i, key] of this.keys.entries()) {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      try {
        return { plain: Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8'), current: i === 0 };
      } catch { /* not this key: try the next */ }
    }
    throw new UnreadableSecretError();
  }
}

export function secretBoxFor(dataDir: string, envSecret: string | undefined, previous: readonly string[] = []): SecretBox {
  if (envSecret) return new SecretBox(envSecret, previous);
  const file = join(dataDir, 'secret.key');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  return new SecretBox(readFileSync(file, 'utf8').trim(), previous);
}

/** What a process publishes of the secret it seals with (ledger/liveness.ts sealPeers), so that
 *  processes sealing with different secrets (a mistyped GATEWAY_SECRET_KEY) can be told apart: 64
 *  bits of an HMAC keyed by the secret, which open nothing and give nothing of the secret away.
 *  Like a sealed key in the database it lets whoever holds it test guesses of the secret offline:
 *  only the admin API and the log show it. */
export const sealFingerprint = (secret: string): string =>
  createHmac('sha256', secret).update('gateway seal fingerprint v1').digest('hex').slice(0, 16);

/** GATEWAY_SECRET_KEY_PREVIOUS: the secrets a rotation is moving away from, comma-separated. */
export const previousSecrets = (text: string | undefined): string[] =>
  (text ?? '').split(',').map((s) => s.trim()).filter(Boolean);

/** Hex SHA-256 of a text: one call, no Hash object (≈ 0.3 µs against createHash's 0.8; every
 *  authenticated request hashes its key). */
export const sha256 = (text: string): string => hash('sha256', text, 'hex');
