import { SignJWT, decodeJwt, errors as joseErrors, importPKCS8, jwtVerify, type CryptoKey, type KeyObject } from 'jose';
import { createPublicKey } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { errors } from '../errors/catalog.js';
import { systemClock, type Clock } from '../lib/clock.js';

export interface AccessClaims { readonly id: string; readonly role: string; readonly app_access: boolean; readonly admin_access: boolean }
/** Verified claims: a session-mode token also names its session (the refresh token it carries). */
export type VerifiedClaims = AccessClaims & { readonly session?: string };

export interface JwtSettings {
  readonly issuer: string;
  readonly ttlMs: number;
  readonly alg: 'HS256' | 'RS256' | 'ES256' | 'EdDSA';
  readonly secret?: string;
  readonly privateKeyPem?: string;
  readonly clock?: Clock;
}

type Key = CryptoKey | KeyObject | Uint8Array;

/** Issues and verifies the gateway's access tokens (Directus claims, jose). */
export class JwtService {
  /**
   * Tokens whose signature was verified, with their claims and expiry: a token is immutable, so its signature need
   * not be checked again; its expiry still is, on every use.
   */
  private readonly verified = new LRUCache<string, { claims: VerifiedClaims; expMs: number }>({ max: 10_000 });

  private constructor(private readonly settings: JwtSettings, private readonly signKey: Key, private readonly verifyKey: Key) {}

  static async create(settings: JwtSettings): Promise<JwtService> {
    if (settings.alg === 'HS256') {
      if (!settings.secret) throw new TypeError('JWT secret required for HS256');
      // imported once: a raw secret would be imported again on every sign and verify
      const k = await crypto.subtle.importKey('raw', new TextEncoder().encode(settings.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
      return new JwtService(settings, k, k);
    }
    if (!settings.privateKeyPem) throw new TypeError(`a private key is required for ${settings.alg}`);
    const priv = await importPKCS8(settings.privateKeyPem, settings.alg, { extractable: true });
    const pub = createPublicKey(settings.privateKeyPem);
    return new JwtService(settings, priv, pub);
  }

  get ttlMs(): number {
    return this.settings.ttlMs;
  }

  /**
   * A token for `claims`. Session mode (Directus 10.10) signs a token that carries its session's refresh token in a
   * `session` claim and lives SESSION_COOKIE_TTL (`session`, `ttlMs`).
   */
  async sign(claims: AccessClaims, nowMs = (this.settings.clock ?? systemClock).now(), session?: { refreshToken: string; ttlMs: number }): Promise<string> {
    const iat = Math.floor(nowMs / 1000);
    const ttlMs = session?.ttlMs ?? this.settings.ttlMs;
    return new SignJWT(session ? { ...claims, session: session.refreshToken } : { ...claims })
      .setProtectedHeader({ alg: this.settings.alg, typ: 'JWT' })
      .setIssuedAt(iat)
      .setExpirationTime(iat + Math.floor(ttlMs / 1000))
      .setIssuer(this.settings.issuer)
      .sign(this.signKey);
  }

  /**
   * The refresh token a session token carries (its `session` claim), the token verified as any access token is (expired
   * → 401 TOKEN_EXPIRED, anything wrong → 403 INVALID_TOKEN); undefined when it is a valid token without one.
   */
  async sessionClaim(token: string, nowMs = (this.settings.clock ?? systemClock).now()): Promise<string | undefined> {
    await this.verify(token, nowMs);
    const session = decodeJwt(token).session;
    return typeof session === 'string' && session.length > 0 ? session : undefined;
  }

  /** True when the string is a JWT this gateway's issuer claims (else it is treated as a static token). */
  claimsOurIssuer(token: string): boolean {
    // a token verified before is one of ours (no second decode on the hot path)
    if (this.verified.has(token)) return true;
    try {
      return decodeJwt(token).iss === this.settings.issuer;
    } catch {
      return false;
    }
  }

  /** The claims of a token verified before and not expired at `nowMs`; undefined otherwise (verify it). */
  knownClaims(token: string, nowMs = (this.settings.clock ?? systemClock).now()): VerifiedClaims | undefined {
    const known = this.verified.get(token);
    return known && nowMs < known.expMs ? known.claims : undefined;
  }

  /**
   * Verifies one of our JWTs. Expired → 401 TOKEN_EXPIRED; bad signature, wrong or `none` algorithm,
   * malformed, or missing claims → 403 INVALID_TOKEN (as Directus).
   */
  async verify(token: string, nowMs = (this.settings.clock ?? systemClock).now()): Promise<VerifiedClaims> {
    const known = this.verified.get(token);
    if (known) {
      if (nowMs >= known.expMs) throw errors.tokenExpired();
      return known.claims;
    }
    try {
      const { payload } = await jwtVerify(token, this.verifyKey, {
        issuer: this.settings.issuer,
        algorithms: [this.settings.alg],
        // a token that never expires is not one of ours
        requiredClaims: ['exp'],
        currentDate: new Date(nowMs),
      });
      const { id, role, app_access, admin_access } = payload as Record<string, unknown>;
      if (typeof id !== 'string' || typeof role !== 'string' || app_access === undefined || admin_access === undefined) {
        throw errors.invalidToken('Invalid token payload.');
      }
      const session = typeof payload.session === 'string' && payload.session.length > 0 ? payload.session : undefined;
      const claims: VerifiedClaims = {
        id, role, app_access: app_access === true || app_access === 1, admin_access: admin_access === true || admin_access === 1,
        ...(session ? { session } : {}),
      };
      if (typeof payload.exp === 'number') this.verified.set(token, { claims, expMs: payload.exp * 1000 });
      return claims;
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) throw errors.tokenExpired();
      if (e instanceof joseErrors.JOSEError) throw errors.invalidToken();
      throw e;
    }
  }
}
