import { createHmac } from 'node:crypto';
import { safeEqual } from '../store/crypto.js';

/**
 * Short-lived read-only links to the comparison report, for a browser (which cannot send the operator's Authorization
 * header): `<expiry ms>.<HMAC of it keyed with the operator token>`. They open only GET views; nothing that changes state.
 */
const sign = (secret: string, expires: number) => createHmac('sha256', secret).update(`compare-report:${expires}`).digest('base64url');

export function reportLink(secret: string, now: number, ttlMs: number): string {
  const expires = now + ttlMs;
  return `${expires}.${sign(secret, expires)}`;
}

export function validReportLink(secret: string | undefined, link: unknown, now: number): boolean {
  if (!secret || typeof link !== 'string') return false;
  const [exp, sig] = link.split('.');
  const expires = Number(exp);
  if (!Number.isSafeInteger(expires) || !sig || expires <= now) return false;
  return safeEqual(sig, sign(secret, expires));
}
