import { z } from 'zod';

/** RFC 5321's bounds on an address (Directus's Joi refuses longer ones as not a valid email). */
export const EMAIL_MAX_CHARS = 254;
export const EMAIL_LOCAL_MAX_CHARS = 64;
/** A password longer than this many UTF-8 bytes is refused before argon2 (or the login limiter) sees it. */
export const PASSWORD_MAX_BYTES = 1024;

const INVALID_EMAIL = '"email" must be a valid email';

/** An email within RFC 5321's lengths: checked before the pattern, so a megabyte of text is never matched. */
export const boundedEmail = () => z.string({ error: '"email" is required' })
  .refine((s) => s.length <= EMAIL_MAX_CHARS && s.lastIndexOf('@') <= EMAIL_LOCAL_MAX_CHARS, { error: INVALID_EMAIL, abort: true })
  .pipe(z.email({ error: INVALID_EMAIL }));

/** A password of at most PASSWORD_MAX_BYTES UTF-8 bytes. */
export const boundedPassword = () => z.string({ error: '"password" is required' })
  .min(1, { error: '"password" is required' })
  .refine((s) => s.length <= PASSWORD_MAX_BYTES && Buffer.byteLength(s) <= PASSWORD_MAX_BYTES,
    { error: `"password" length must be less than or equal to ${PASSWORD_MAX_BYTES} bytes` });
