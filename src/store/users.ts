import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Database, UsersTable } from './schema.js';
import { randomToken, sha256, type SecretBox } from './crypto.js';
import type { ChangeBus } from './changes.js';

export type UserRow = Selectable<UsersTable>;

/** Role uuid given to users created without one. */
export const DEFAULT_ROLE = '5f3b2c1a-0d4e-4b6f-9a8c-7e1d2f3a4b5c';
/** A user as the rest of the gateway sees it: never the encrypted key, never the hash. */
export interface LegacyUser {
  readonly id: string;
  readonly email: string;
  readonly firstName: string | null;
  readonly lastName: string | null;
  readonly role: string;
  readonly v1UserId: string;
  readonly status: string;
}
export interface NewUser {
  id?: string;
  email: string;
  passwordHash: string | null;
  firstName?: string | null;
  lastName?: string | null;
  role: string;
  v1Key: string;
  v1UserId: string;
  /** `unbound` for users imported without a v1 key: they cannot log in until rebound. */
  status?: 'active' | 'unbound';
}

export class DuplicateEmailError extends Error {
  constructor(email: string) {
    super(`A user with email ${email} already exists.`);
  }
}

/** RFC 5321's bounds (254 characters, 64 before the @): what the store's email columns hold on every database. */
export class EmailTooLongError extends Error {
  constructor(email: string) {
    super(`The email ${email.slice(0, 40)}… is longer than an address may be (254 characters, 64 before the @).`);
  }
}

/** The trimmed email, or EmailTooLongError (before any write: SQLite would store it whole, PostgreSQL refuse it). */
function boundedEmail(email: string): string {
  const e = email.trim();
  if (e.length > 254 || e.lastIndexOf('@') > 64) throw new EmailTooLongError(e);
  return e;
}

const toUser = (r: UserRow): LegacyUser => ({
  id: r.id,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  role: r.role,
  v1UserId: r.v1_user_id,
  status: r.status,
});

/** Entries kept of static tokens (by hash) and users (by id): the hot path reads them on every request. */
const MEMORY_MAX = 20_000;

/**
 * Legacy users bound to v1 keys (encrypted at rest), and their static tokens. Users by id and static tokens by
 * hash are kept in memory (every authenticated request needs them); every write tells the change bus, so other
 * instances drop their copies, and a resync drops them all.
 */
export class UserStore {
  private readonly users = new Map<string, LegacyUser | null>();
  private readonly tokens = new Map<string, { userId: string; tokenId: string }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    private readonly now: () => number = Date.now,
    private readonly bus?: ChangeBus,
  ) {
    bus?.on('users', (id) => {
      if (id === '*') this.users.clear();
      else this.users.delete(id);
    });
    bus?.on('tokens', () => this.tokens.clear());
    bus?.onResync(() => {
      this.users.clear();
      this.tokens.clear();
    });
  }

  private async changed(topic: 'users' | 'tokens', key = '*'): Promise<void> {
    if (topic === 'users') {
      if (key === '*') this.users.clear();
      else this.users.delete(key);
    } else this.tokens.clear();
    await this.bus?.publish(topic, key);
  }

  private remember<K, V>(m: Map<K, V>, k: K, v: V): void {
    if (m.size >= MEMORY_MAX) m.clear();
    m.set(k, v);
  }

  async create(u: NewUser): Promise<LegacyUser> {
    const lower = boundedEmail(u.email).toLowerCase();
    if (await this.db.selectFrom('users').select('id').where('email_lower', '=', lower).executeTakeFirst()) throw new DuplicateEmailError(u.email);
    const row: UserRow = {
      id: u.id ?? randomUUID(),
      email: u.email.trim(),
      email_lower: lower,
      password_hash: u.passwordHash,
      first_name: u.firstName ?? null,
      last_name: u.lastName ?? null,
      role: u.role,
      v1_key_enc: this.box.seal(u.v1Key),
      v1_user_id: u.v1UserId,
      status: u.status ?? 'active',
      created_at: this.now(),
      updated_at: null,
    };
    await this.db.insertInto('users').values(row).execute();
    await this.changed('users', row.id);
    return toUser(row);
  }

  /** Ids and lower-cased emails of every user (imports check against them once instead of per row). */
  async identities(): Promise<{ ids: Set<string>; emails: Map<string, string> }> {
    const rows = await this.db.selectFrom('users').select(['id', 'email_lower']).execute();
    return { ids: new Set(rows.map((r) => r.id)), emails: new Map(rows.map((r) => [r.email_lower, r.id])) };
  }

  /** Creates many users in transactions of 500 (an import): emails must already be known to be new. */
  async createMany(list: readonly (NewUser & { id: string })[]): Promise<void> {
    for (const u of list) boundedEmail(u.email);
    for (let i = 0; i < list.length; i += 500) {
      const chunk = list.slice(i, i + 500).map((u): UserRow => ({
        id: u.id, email: u.email.trim(), email_lower: u.email.trim().toLowerCase(), password_hash: u.passwordHash,
        first_name: u.firstName ?? null, last_name: u.lastName ?? null, role: u.role,
        v1_key_enc: this.box.seal(u.v1Key), v1_user_id: u.v1UserId, status: u.status ?? 'active', created_at: this.now(), updated_at: null,
      }));
      await this.db.transaction().execute(async (tx) => {
        for (let j = 0; j < chunk.length; j += 50) await tx.insertInto('users').values(chunk.slice(j, j + 50)).execute();
      });
    }
    await this.changed('users');
  }

  /** Replaces an imported user's password hash, names, role and (when given) key: `users import --update`. */
  async replaceImported(id: string, u: NewUser): Promise<void> {
    await this.db.updateTable('users').set({
      password_hash: u.passwordHash, first_name: u.firstName ?? null, last_name: u.lastName ?? null, role: u.role, updated_at: this.now(),
      ...(u.v1Key ? { v1_key_enc: this.box.seal(u.v1Key), v1_user_id: u.v1UserId, status: 'active' } : {}),
    }).where('id', '=', id).execute();
    await this.changed('users', id);
  }

  async byEmail(email: string): Promise<(LegacyUser & { passwordHash: string | null }) | undefined> {
    const r = await this.db.selectFrom('users').selectAll().where('email_lower', '=', email.trim().toLowerCase()).executeTakeFirst();
    return r ? { ...toUser(r), passwordHash: r.password_hash } : undefined;
  }

  /** The user as this process holds it, without a store read: null for none, undefined when not held. */
  held(id: string): LegacyUser | null | undefined {
    return this.users.get(id);
  }

  async byId(id: string): Promise<LegacyUser | undefined> {
    const kept = this.users.get(id);
    if (kept !== undefined) return kept ?? undefined;
    const r = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    const u = r ? toUser(r) : null;
    this.remember(this.users, id, u);
    return u ?? undefined;
  }

  async list(): Promise<LegacyUser[]> {
    return (await this.db.selectFrom('users').selectAll().orderBy('email_lower').execute()).map(toUser);
  }

  async remove(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
    await this.changed('users', id);
    await this.changed('tokens');
    return Number(r.numDeletedRows) > 0;
  }

  /** Active users with a bound key (who can read a team for the gateway's own purposes: webhooks, the index). */
  async boundUsers(): Promise<{ id: string; v1UserId: string }[]> {
    return this.db.selectFrom('users').select(['id', 'v1_user_id as v1UserId']).where('status', '=', 'active').orderBy('created_at').execute();
  }

  /** The decrypted v1 key: for the v1 session factory, and the migration proof (its snippets' environment, nowhere else). */
  async v1Key(id: string): Promise<string | undefined> {
    const r = await this.db.selectFrom('users').select('v1_key_enc').where('id', '=', id).executeTakeFirst();
    return r ? this.box.open(r.v1_key_enc) : undefined;
  }

  async rebind(id: string, v1Key: string, v1UserId: string): Promise<boolean> {
    const r = await this.db
      .updateTable('users')
      .set({ v1_key_enc: this.box.seal(v1Key), v1_user_id: v1UserId, status: 'active', updated_at: this.now() })
      .where('id', '=', id)
      .executeTakeFirst();
    await this.changed('users', id);
    return Number(r.numUpdatedRows) > 0;
  }

  async update(id: string, patch: { firstName?: string | null; lastName?: string | null; email?: string }): Promise<LegacyUser | undefined> {
    const set: Partial<UserRow> = { updated_at: this.now() };
    if (patch.firstName !== undefined) set.first_name = patch.firstName;
    if (patch.lastName !== undefined) set.last_name = patch.lastName;
    if (patch.email !== undefined) {
      const lower = boundedEmail(patch.email).toLowerCase();
      const other = await this.db.selectFrom('users').select('id').where('email_lower', '=', lower).executeTakeFirst();
      if (other && other.id !== id) throw new DuplicateEmailError(patch.email);
      set.email = patch.email.trim();
      set.email_lower = lower;
    }
    await this.db.updateTable('users').set(set).where('id', '=', id).execute();
    await this.changed('users', id);
    return this.byId(id);
  }

  /** Suspends (`suspended`) or re-activates (`active`) a user; a suspended user can neither log in, refresh nor call. */
  async setStatus(id: string, status: 'active' | 'suspended'): Promise<boolean> {
    const r = await this.db.updateTable('users').set({ status, updated_at: this.now() }).where('id', '=', id).executeTakeFirst();
    await this.changed('users', id);
    await this.changed('tokens');
    return Number(r.numUpdatedRows) > 0;
  }

  async setPasswordHash(id: string, hash: string): Promise<void> {
    await this.db.updateTable('users').set({ password_hash: hash, updated_at: this.now() }).where('id', '=', id).execute();
  }

  // ---------------------------------------------------------------- static tokens

  /** Creates a static token; the plaintext is returned once and only its hash is stored. */
  async createStaticToken(userId: string, name: string): Promise<{ id: string; token: string }> {
    const token = randomToken(32);
    const id = randomUUID();
    await this.db
      .insertInto('static_tokens')
      .values({ id, user_id: userId, token_hash: sha256(token), name, created_at: this.now(), revoked_at: null, last_used_at: null })
      .execute();
    return { id, token };
  }

  /** Stores a static token the legacy system issued (its plaintext hashed); false when that token is already known. */
  async importStaticToken(userId: string, token: string, name: string): Promise<boolean> {
    const hash = sha256(token);
    if (await this.db.selectFrom('static_tokens').select('id').where('token_hash', '=', hash).executeTakeFirst()) return false;
    await this.db
      .insertInto('static_tokens')
      .values({ id: randomUUID(), user_id: userId, token_hash: hash, name, created_at: this.now(), revoked_at: null, last_used_at: null })
      .execute();
    await this.changed('tokens');
    return true;
  }

  async userForStaticToken(token: string): Promise<{ user: LegacyUser; tokenId: string } | undefined> {
    const hash = sha256(token);
    const kept = this.tokens.get(hash);
    if (kept) {
      const user = await this.byId(kept.userId);
      if (user && user.status === 'active') return { user, tokenId: kept.tokenId };
      return undefined;
    }
    const r = await this.db
      .selectFrom('static_tokens')
      .innerJoin('users', 'users.id', 'static_tokens.user_id')
      .selectAll('users')
      .select(['static_tokens.id as token_id'])
      .where('static_tokens.token_hash', '=', hash)
      .where('static_tokens.revoked_at', 'is', null)
      .where('users.status', '=', 'active')
      .executeTakeFirst();
    if (!r) return undefined; // unknown tokens are not kept: random strings must not fill memory
    const { token_id, ...user } = r;
    this.remember(this.tokens, hash, { userId: user.id as string, tokenId: token_id });
    return { user: toUser(user as UserRow), tokenId: token_id };
  }

  async listStaticTokens(userId?: string): Promise<{ id: string; user_id: string; name: string; created_at: number; revoked_at: number | null }[]> {
    let q = this.db.selectFrom('static_tokens').select(['id', 'user_id', 'name', 'created_at', 'revoked_at']);
    if (userId) q = q.where('user_id', '=', userId);
    return q.orderBy('created_at').execute();
  }

  async revokeStaticToken(id: string): Promise<boolean> {
    const r = await this.db
      .updateTable('static_tokens')
      .set({ revoked_at: this.now() })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    await this.changed('tokens');
    return Number(r.numUpdatedRows) > 0;
  }
}
