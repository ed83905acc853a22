import { hashPassword } from '../auth/passwords.js';
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
  await deps.idMap.importPairs([{ type: 'user', uuid: u.id, v1Id: v1UserId }]);
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

/**
 * Imports users from a legacy Directus export: id, email, password (the argon2 hash as exported),
 * first_name, last_name, role; an optional v1_key binds them at once, else they wait for a rebind.
 */
export async function importUsers(
  deps: Deps,
  records: readonly Record<string, unknown>[],
): Promise<{ imported: number; unbound: number; problems: string[] }> {
  const problems: string[] = [];
  let imported = 0;
  let unbound = 0;
  for (const [i, r] of records.entries()) {
    const id = String(r.id ?? '');
    const email = String(r.email ?? '');
    const hash = r.password ?? r.password_hash;
    if (!isUuid(id)) {
      problems.push(`row ${i + 1}: id must be a uuid`);
      continue;
    }
    if (!email.includes('@')) {
      problems.push(`row ${i + 1}: email is missing`);
      continue;
    }
    if (hash !== undefined && hash !== null && hash !== '' && !String(hash).startsWith('$argon2')) {
      problems.push(`row ${i + 1}: password must be an argon2 hash`);
      continue;
    }
    const key = typeof r.v1_key === 'string' && r.v1_key ? r.v1_key : undefined;
    try {
      const v1UserId = key ? await v1UserFor(deps, key) : '';
      await deps.users.create({
        id,
        email,
        passwordHash: hash ? String(hash) : null,
        firstName: (r.first_name as string) || null,
        lastName: (r.last_name as string) || null,
        role: isUuid(r.role) ? r.role : DEFAULT_ROLE,
        v1Key: key ?? '',
        v1UserId,
        status: key ? 'active' : 'unbound',
      });
      if (key) await deps.idMap.importPairs([{ type: 'user', uuid: id, v1Id: v1UserId }]);
      else unbound++;
      imported++;
    } catch (e) {
      problems.push(`row ${i + 1} (${email}): ${(e as Error).message}`);
    }
  }
  return { imported, unbound, problems };
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
