import { hashPassword } from '../auth/passwords.js';
import { HEADER_WIDTH, LINE, WIDTH } from '../lib/csv.js';
import { mapLimit } from '../lib/limit.js';
import type { Deps } from '../deps.js';
import { isUuid } from '../lib/uuid.js';
import { ID_TYPES, type IdType } from '../translate/ids.js';
import { DEFAULT_ROLE, DuplicateEmailError, type LegacyUser } from '../store/users.js';
import { V1UnauthorizedError } from '../v1/errors.js';

/** Operator actions shared by the command line and the tests. Every one validates before it writes. */
export class AdminError extends Error {}

const KEY_RE = /^sk_[A-Za-z0-9]{32}$/;

async function v1UserFor(deps: Deps, key: string): Promise<string> {
  if (!KEY_RE.test(key)) throw new AdminError('the v1 key must be sk_ followed by 32 characters');
  try {
    return (await deps.v1.as(key).me()).id;
  } catch (e) {
    const why = (e as Error).message.split(key).join('sk_…');
    // only a 401 is the key's fault: anything else is v1 not answering, and says where it was asked
    if (e instanceof V1UnauthorizedError) throw new AdminError(`v1 refused the key (GET /v1/me at ${deps.v1.options.baseUrl}): ${why}`);
    throw new AdminError(`v1 could not be asked about the key (GET /v1/me at ${deps.v1.options.baseUrl}): ${why}`);
  }
}

export async function findUser(deps: Deps, who: string): Promise<LegacyUser> {
  const u = isUuid(who) ? await deps.users.byId(who) : await deps.users.byEmail(who);
  if (!u) throw new AdminError(`no user ${who}`);
  return u;
}

/** Adds a user bound to a v1 key, after checking the key with GET /v1/me. */
export async function addUser(
  deps: Deps,
  o: { email: string; password: string; key: string; firstName?: string; lastName?: string; role?: string; id?: string },
): Promise<LegacyUser> {
  if (!/^[^@\s]+@[^@\s]+$/.test(o.email)) throw new AdminError('a valid email is required');
  if (o.password.length < 8) throw new AdminError('the password needs at least 8 characters');
  const v1UserId = await v1UserFor(deps, o.key);
  const u = await deps.users
    .create({
      ...(o.id ? { id: o.id } : {}),
      email: o.email,
      passwordHash: await hashPassword(o.password),
      firstName: o.firstName ?? null,
      lastName: o.lastName ?? null,
      role: o.role ?? DEFAULT_ROLE,
      v1Key: o.key,
      v1UserId,
    })
    .catch((e: unknown) => {
      throw e instanceof DuplicateEmailError ? new AdminError(`a user with email ${o.email} already exists`) : e;
    });
  try {
    await deps.idMap.importPairs([{ type: 'user', uuid: u.id, v1Id: v1UserId }]);
  } catch (e) {
    await deps.users.remove(u.id); // whole or not at all: a user without its id pair is refused as a duplicate at a retry
    throw e;
  }
  return u;
}

export async function rebind(deps: Deps, who: string, key: string): Promise<LegacyUser> {
  const u = await findUser(deps, who);
  const v1UserId = await v1UserFor(deps, key);
  await deps.users.rebind(u.id, key, v1UserId);
  await deps.idMap.importPairs([{ type: 'user', uuid: u.id, v1Id: v1UserId }]).catch(() => undefined);
  deps.forgetKey(u.id);
  return (await deps.users.byId(u.id)) as LegacyUser;
}

export interface ImportOptions {
  /** Existing users (same id or email): skip them, or update them; by default each is a reported problem. */
  readonly existing?: 'report' | 'skip' | 'update';
  /** Check every row (and every distinct key, once) and write nothing. */
  readonly check?: boolean;
  /**
   * Called as the work advances, step by step (the CLI reports progress on stderr): each distinct key checked with v1
   * (`checking keys`), each plaintext password hashed (`hashing passwords`), rows written (`writing`).
   */
  readonly onProgress?: (done: number, total: number, phase: ImportPhase) => void;
  /** Plaintext passwords hashed at once (argon2 is CPU-bound: about the number of cores). */
  readonly hashConcurrency?: number;
}
export type ImportPhase = 'checking keys' | 'hashing passwords' | 'writing';
export interface ImportResult { imported: number; updated: number; skipped: number; unbound: number; problems: string[]; checked: boolean }

/**
 * Imports users from a legacy Directus export: id, email, password (the argon2 hash as exported, or a plaintext password,
 * hashed here), first_name, last_name, role; an optional v1_key binds them at once, else they wait for a rebind. Every row
 * is checked first (problems carry the file's line number, shifted columns are named), each distinct key is checked with
 * v1 once, then new users are written in transactions of 500.
 */
export async function importUsers(deps: Deps, records: readonly Record<string, unknown>[], o: ImportOptions = {}): Promise<ImportResult> {
  const problems: string[] = [];
  const where = (r: Record<string | symbol, unknown>, i: number) => `line ${(r[LINE] as number | undefined) ?? i + 2}`;
  const known = await deps.users.identities();
  const seenEmails = new Set<string>();
  type Row = {
    at: string; id: string; email: string; hash: string | null; plain: string | null; first: string | null; last: string | null; role: string; key?: string;
  };
  const rows: Row[] = [];
  const existing: Row[] = [];
  for (const [i, raw] of records.entries()) {
    const r = raw as Record<string | symbol, unknown>;
    const at = where(r, i);
    if (r[WIDTH] !== undefined && r[WIDTH] !== r[HEADER_WIDTH]) {
      problems.push(`${at}: ${String(r[WIDTH])} columns where the header has ${String(r[HEADER_WIDTH])} — a value with a comma that is not quoted? ` +
        '(argon2 hashes contain commas: quote them)');
      continue;
    }
    const id = String(r.id ?? '');
    const email = String(r.email ?? '').trim();
    const pw = r.password ?? r.password_hash;
    if (!isUuid(id)) { problems.push(`${at}: id must be a uuid`); continue; }
    if (!/^[^@\s]+@[^@\s]+$/.test(email)) { problems.push(`${at}: email is missing or not an email`); continue; }
    if (seenEmails.has(email.toLowerCase())) { problems.push(`${at}: email ${email} appears twice in the file`); continue; }
    seenEmails.add(email.toLowerCase());
    const pws = pw === undefined || pw === null ? '' : String(pw);
    if (pws && !pws.startsWith('$argon2') && pws.length < 8) { problems.push(`${at}: a plaintext password needs at least 8 characters`); continue; }
    const key = typeof r.v1_key === 'string' && r.v1_key ? r.v1_key : undefined;
    if (key && !KEY_RE.test(key)) { problems.push(`${at}: v1_key must be sk_ followed by 32 characters`); continue; }
    const row: Row = {
      at, id, email, hash: pws.startsWith('$argon2') ? pws : null, plain: pws && !pws.startsWith('$argon2') ? pws : null,
      first: (r.first_name as string) || null, last: (r.last_name as string) || null, role: isUuid(r.role) ? (r.role as string) : DEFAULT_ROLE,
      ...(key ? { key } : {}),
    };
    const clash = known.ids.has(id) ? id : known.emails.get(email.toLowerCase());
    if (clash !== undefined) {
      if (clash !== id && known.ids.has(id)) { problems.push(`${at}: id ${id} and email ${email} belong to two different users`); continue; }
      if (o.existing === 'skip' || o.existing === 'update') existing.push({ ...row, id: clash });
      else problems.push(`${at}: ${email} already exists (use --skip-existing or --update)`);
      continue;
    }
    rows.push(row);
  }
  // one check with v1 per distinct key (bounded), never one per row
  const keys = [...new Set([...rows, ...existing].map((r) => r.key).filter((k): k is string => !!k))];
  const v1Users = new Map<string, string>();
  let checkedKeys = 0;
  await mapLimit(keys, 4, async (k) => {
    try { v1Users.set(k, await v1UserFor(deps, k)); } catch (e) { problems.push(`key ${k.slice(0, 6)}…: ${(e as Error).message}`); }
    o.onProgress?.(++checkedKeys, keys.length, 'checking keys');
  });
  const keyOk = (r: Row) => !r.key || v1Users.has(r.key);
  for (const r of [...rows, ...existing]) if (!keyOk(r)) problems.push(`${r.at}: its v1 key was refused (see above)`);
  const good = rows.filter(keyOk);
  const updates = o.existing === 'update' ? existing.filter(keyOk) : [];
  const result: ImportResult = { imported: 0, updated: 0, skipped: o.existing === 'skip' ? existing.length : 0, unbound: 0, problems, checked: !!o.check };
  if (o.check) return result;
  let done = 0;
  const total = good.length + updates.length;
  // plaintext passwords are hashed here, a few at a time (argon2 is CPU-bound)
  const plain = [...good, ...updates].filter((r) => r.plain);
  let hashed = 0;
  await mapLimit(plain, o.hashConcurrency ?? 2, async (r) => {
    r.hash = await hashPassword(r.plain!);
    r.plain = null;
    o.onProgress?.(++hashed, plain.length, 'hashing passwords');
  });
  const toUser = (r: Row) => ({
    id: r.id, email: r.email, passwordHash: r.hash, firstName: r.first, lastName: r.last, role: r.role,
    v1Key: r.key ?? '', v1UserId: r.key ? v1Users.get(r.key)! : '', status: (r.key ? 'active' : 'unbound') as 'active' | 'unbound',
  });
  for (let i = 0; i < good.length; i += 500) {
    const chunk = good.slice(i, i + 500);
    await deps.users.createMany(chunk.map(toUser));
    done += chunk.length;
    o.onProgress?.(done, total, 'writing');
  }
  for (const r of updates) {
    await deps.users.replaceImported(r.id, toUser(r));
    o.onProgress?.(++done, total, 'writing');
  }
  const pairs = [...good, ...updates].filter((r) => r.key).map((r) => ({ type: 'user', uuid: r.id, v1Id: v1Users.get(r.key!)! }));
  if (pairs.length) await deps.idMap.importPairs(pairs);
  result.imported = good.length;
  result.updated = updates.length;
  result.unbound = good.filter((r) => !r.key).length;
  return result;
}

const PREFIX_TO_TYPE = Object.fromEntries(Object.entries(ID_TYPES).map(([t, p]) => [p, t])) as Record<string, IdType>;

/** Imports legacy uuid ↔ v1 id pairs (CSV or JSON: legacy_id/uuid, v1_id); the type comes from the v1 prefix. */
export async function importIdMap(
  deps: Deps,
  records: readonly Record<string, unknown>[],
): Promise<{ imported: number; unchanged: number; problems: string[] }> {
  const problems: string[] = [];
  const pairs: { type: string; uuid: string; v1Id: string }[] = [];
  records.forEach((r, i) => {
    const uuid = String(r.legacy_id ?? r.uuid ?? r.legacy_uuid ?? '');
    const v1Id = String(r.v1_id ?? '');
    const type = PREFIX_TO_TYPE[v1Id.slice(0, v1Id.indexOf('_') + 1)];
    if (!isUuid(uuid)) problems.push(`row ${i + 1}: "${uuid}" is not a uuid`);
    else if (!type) problems.push(`row ${i + 1}: "${v1Id}" has no known v1 prefix (${Object.values(ID_TYPES).join(', ')})`);
    else pairs.push({ type, uuid, v1Id });
  });
  if (problems.length > 0) return { imported: 0, unchanged: 0, problems };
  const r = await deps.idMap.importPairs(pairs);
  await deps.ids.load();
  return { ...r, problems };
}

/**
 * Imports the legacy system's static tokens: a Directus `directus_users` export (`id`, `email`, `token`), so integrations
 * holding one keep working against the gateway. Rows are matched to gateway users by id, else by email.
 */
export async function importTokens(
  deps: Deps,
  rows: readonly Record<string, unknown>[],
): Promise<{ imported: number; known: number; problems: string[] }> {
  let imported = 0;
  let known = 0;
  const problems: string[] = [];
  for (const [i, r] of rows.entries()) {
    const line = i + 2;
    const token = typeof r.token === 'string' ? r.token.trim() : '';
    if (!token) continue; // users without a static token
    if (token.length < 16) {
      problems.push(`row ${line}: the token is shorter than 16 characters`);
      continue;
    }
    const id = typeof r.id === 'string' ? r.id : '';
    const email = typeof r.email === 'string' ? r.email : '';
    const user = (isUuid(id) ? await deps.users.byId(id) : undefined) ?? (email ? await deps.users.byEmail(email) : undefined);
    if (!user) {
      problems.push(`row ${line}: no gateway user ${id || email || '(no id or email)'}; import the users first`);
      continue;
    }
    if (await deps.users.importStaticToken(user.id, token, 'imported from the legacy system')) imported++;
    else known++;
  }
  return { imported, known, problems };
}
