import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** AES-256-GCM for v1 keys at rest: `v1:<base64 iv|tag|ciphertext>`. */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new TypeError('SecretBox needs a 32-byte key');
  }
  seal(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return `v1:${Buffer.concat([iv, c.getAuthTag(), body]).toString('base64')}`;
  }
  open(sealed: string): string {
    if (!sealed.startsWith('v1:')) throw new Error('unknown sealed format');
    const raw = Buffer.from(sealed.slice(3), 'base64');
    const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  }
}

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** Constant-time string comparison (different lengths compare false without leaking which byte). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

/** A random token of URL-safe characters (refresh and static tokens). */
/**
 * A random token (base64url). It never starts with `-`, so it can be given to a command line as the value of an option
 * (`--gateway-token <token>`) without being taken for an option itself.
 */
export const randomToken = (bytes = 48) => {
  const t = randomBytes(bytes).toString('base64url');
  return t.startsWith('-') ? `A${t.slice(1)}` : t;
};
