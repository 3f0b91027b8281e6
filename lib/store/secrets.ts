// Provider keys are encrypted at rest with AES-256-GCM. The key comes from GATEWAY_SECRET_KEY;
// without it a random key is generated once into the data folder (mode 0600) so `make run` works.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class SecretBox {
  private readonly key: Buffer;
  constructor(secret: string) { this.key = createHash('sha256').update(secret).digest(); }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), body.toString('base64')].join('.');
  }

  open(sealed: string): string {
    const [v, iv, tag, body] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || body === undefined) throw new Error('unreadable sealed secret');
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    d.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([d.update(Buffer.from(body, 'base64')), d.final()]).toString('utf8');
  }
}

export function secretBoxFor(dataDir: string, envSecret: string | undefined): SecretBox {
  if (envSecret) return new SecretBox(envSecret);
  const file = join(dataDir, 'secret.key');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  return new SecretBox(readFileSync(file, 'utf8').trim());
}

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
