import { createHmac, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import { randomToken, sha256 } from './crypto.js';

export type RotateResult =
  | { readonly ok: true; readonly userId: string; readonly sessionId: string; readonly refreshToken: string }
  | { readonly ok: false; readonly reason: 'unknown' | 'expired' | 'revoked' | 'reused' };

/** Whether a rotated token stays good for the grace period (session mode, as Directus 10.10 keeps its old session). */
export interface GraceOption {
  readonly grace?: boolean;
}

/**
 * A token's one successor: derived from it under its session's id (a random uuid the store never gives out), so every
 * refresh of one token — on any instance, at once or within the grace period — answers the same next token.
 */
export function successorOf(sessionId: string, refreshToken: string): string {
  const t = createHmac('sha512', `refresh-successor:${sessionId}`).update(refreshToken).digest().subarray(0, 48).toString('base64url');
  return t.startsWith('-') ? `A${t.slice(1)}` : t;
}

/**
 * Login sessions and their refresh tokens. Tokens are stored hashed; refresh rotates (the old token stops working at
 * once) and presenting an already-rotated token revokes the whole session — except in session mode within `graceMs` of
 * its rotation (`SESSION_REFRESH_GRACE_PERIOD`): a browser's concurrent refreshes and in-flight requests still carry
 * the old token, so it is still live, and refreshing it again answers the same successor (Directus 10.10's
 * `next_token`): one chain, never a fork that outlives the grace period.
 */
export class SessionStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly graceMs = 0,
  ) {}

  /** A rotated token still within its grace period (null rotated_at: rotated before the grace period existed). */
  private inGrace(row: { status: string; rotated_at: number | null }, opts: GraceOption): boolean {
    return !!opts.grace && row.status === 'rotated' && row.rotated_at !== null && this.now() < Number(row.rotated_at) + this.graceMs;
  }

  async create(userId: string): Promise<{ sessionId: string; refreshToken: string }> {
    const sessionId = randomUUID();
    const refreshToken = randomToken(48);
    const t = this.now();
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto('sessions').values({ id: sessionId, user_id: userId, created_at: t, revoked_at: null, revoke_reason: null }).execute();
      await tx
        .insertInto('refresh_tokens')
        .values({ token_hash: sha256(refreshToken), session_id: sessionId, status: 'active', expires_at: t + this.ttlMs, created_at: t, rotated_at: null })
        .execute();
    });
    return { sessionId, refreshToken };
  }

  async rotate(refreshToken: string, opts: GraceOption = {}): Promise<RotateResult> {
    const hash = sha256(refreshToken);
    return this.db.transaction().execute(async (tx) => {
      const read = () => tx
        .selectFrom('refresh_tokens')
        .innerJoin('sessions', 'sessions.id', 'refresh_tokens.session_id')
        .select(['refresh_tokens.status', 'refresh_tokens.expires_at', 'refresh_tokens.rotated_at', 'sessions.id as session_id', 'sessions.user_id',
          'sessions.revoked_at'])
        .where('refresh_tokens.token_hash', '=', hash)
        .executeTakeFirst();
      const row = await read();
      if (!row) return { ok: false, reason: 'unknown' } as const;
      if (row.revoked_at !== null) return { ok: false, reason: 'revoked' } as const;
      const t = this.now();
      // the successor, made by the refresh that rotated the token and answered again (not made again) within the grace
      const another = async () => {
        const next = successorOf(row.session_id, refreshToken);
        await tx.insertInto('refresh_tokens')
          .values({ token_hash: sha256(next), session_id: row.session_id, status: 'active', expires_at: t + this.ttlMs, created_at: t, rotated_at: null })
          .onConflict((oc) => oc.column('token_hash').doNothing())
          .execute();
        return { ok: true, userId: row.user_id, sessionId: row.session_id, refreshToken: next } as const;
      };
      if (this.inGrace(row, opts)) return another();
      if (row.status !== 'active') {
        await tx.updateTable('sessions').set({ revoked_at: t, revoke_reason: 'refresh_token_reuse' }).where('id', '=', row.session_id).execute();
        await tx.updateTable('refresh_tokens').set({ status: 'revoked' }).where('session_id', '=', row.session_id).execute();
        return { ok: false, reason: 'reused' } as const;
      }
      if (row.expires_at <= t) return { ok: false, reason: 'expired' } as const;
      // Only the caller that flips active → rotated wins; a concurrent second presenter sees reuse (or, in session mode,
      // the grace period of the token the first one just rotated)
      const flipped = await tx
        .updateTable('refresh_tokens')
        .set({ status: 'rotated', rotated_at: t })
        .where('token_hash', '=', hash)
        .where('status', '=', 'active')
        .executeTakeFirst();
      if (Number(flipped.numUpdatedRows) === 0) {
        const now = await read();
        return now && now.revoked_at === null && this.inGrace(now, opts) ? another() : ({ ok: false, reason: 'reused' } as const);
      }
      return another();
    });
  }

  /**
   * True while this refresh token is its session's current one — active (or, with `grace`, rotated within the grace
   * period), unexpired, its session not revoked.
   */
  async live(refreshToken: string, opts: GraceOption = {}): Promise<boolean> {
    const row = await this.db.selectFrom('refresh_tokens').innerJoin('sessions', 'sessions.id', 'refresh_tokens.session_id')
      .select(['refresh_tokens.status', 'refresh_tokens.expires_at', 'refresh_tokens.rotated_at', 'sessions.revoked_at'])
      .where('refresh_tokens.token_hash', '=', sha256(refreshToken)).executeTakeFirst();
    return !!row && (row.status === 'active' || this.inGrace(row, opts)) && Number(row.expires_at) > this.now() && row.revoked_at === null;
  }

  /** Ends the session a refresh token belongs to; unknown tokens are ignored. */
  async logout(refreshToken: string): Promise<void> {
    const row = await this.db.selectFrom('refresh_tokens').select('session_id').where('token_hash', '=', sha256(refreshToken)).executeTakeFirst();
    if (!row) return;
    await this.db
      .updateTable('sessions')
      .set({ revoked_at: this.now(), revoke_reason: 'logout' })
      .where('id', '=', row.session_id)
      .where('revoked_at', 'is', null)
      .execute();
    await this.db.updateTable('refresh_tokens').set({ status: 'revoked' }).where('session_id', '=', row.session_id).execute();
  }
}
