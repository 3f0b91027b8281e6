// Provider keys are encrypted at rest with AES-256-GCM. The key comes from GATEWAY_SECRET_KEY;
// without it a random key is generated once into the data folder (mode 0600) so `make run` works.
import { createCipheriv, createDecipheriv, createHash, hash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class SecretBox {
  private readonly key: Buffer;
  constructor(secret: string) { this.key = createHash('sha256').update(secret).digest(); }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unreadable sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
  }
}

export function secretBoxFor(dataDir: string, envSecret: string | undefined): SecretBox {
  if (envSecret) return new SecretBox(envSecret);
  const file = join(dataDir, 'secret.key');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  return new SecretBox(readFileSync(file, 'utf8').trim());
}

/** Hex SHA-256 of a text: one call, no Hash object (≈ 0.3 µs against createHash's 0.8; every
 *  authenticated request hashes its key). */
export const sha256 = (text: string): string => hash('sha256', text, 'hex');
