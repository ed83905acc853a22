import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { settleItem } from '../exec/item-bound.js';
import { RecordMap } from '../live/record-map.js';
import { compileProjection } from '../query/project.js';
import type { QueryNode } from '../query/ast.js';
import { selectRecords, type QueryResult } from '../query/run.js';
import { searchPreHandler } from '../http/search.js';
import type { ResourceSchema } from '../query/schema.js';
import { parseLegacyQuery, requestEnv } from '../read/context.js';
import { heldBytes } from '../http/held-answer.js';
import { itemBytesInTurns } from '../lib/item-bytes.js';
import { KeptRoom } from '../read/data-room.js';
import { answerEnd } from '../read/answer-end.js';
import { requestContext } from '../read/request-context.js';
import { proxied } from '../config/route-modes.js';
import { z } from 'zod';
import { boundedEmail } from '../auth/credential-bounds.js';
import { errors } from '../errors/catalog.js';
import type { Deps } from '../deps.js';
import { DuplicateEmailError, type LegacyUser } from '../store/users.js';

const PatchMe = z.object({
  first_name: z.string().max(255).nullable().optional(),
  last_name: z.string().max(255).nullable().optional(),
  email: boundedEmail().optional(),
}).loose();

/**
 * The caller's user as a record (store fields, the accounts — v1 teams — the bound key reaches, accounts_owned: teams
 * where the role is admin), with the request's query and the record map its relations are looked up in.
 */
async function userRecord(deps: Deps, request: FastifyRequest, user: LegacyUser, gone?: AbortSignal) {
  const schema = deps.mappings.schemas.user as ResourceSchema;
  const q = parseLegacyQuery(deps, request, schema);
  const { env } = await requestEnv(deps, request, ['account'], gone);
  const records = new RecordMap(env);
  const teams = await env.catalog.teams();
  const expandsAccounts = q.fields.some((f) => (f.path[0] === 'accounts' || f.path[0] === 'accounts_owned' || f.path[0] === '*') && f.path.length > 1);
  const accounts = expandsAccounts ? await records.accounts(teams) : teams.map((t) => records.add('account', { id: deps.ids.toLegacy('account', t.id) }, t));
  const record = records.add('user', {
    id: user.id, first_name: user.firstName, last_name: user.lastName, email: user.email, role: user.role,
  });
  // (every account the key reaches: deep[accounts][…] chooses among them as Directus does)
  records.setChildren('user', user.id, 'accounts', accounts, true);
  records.setChildren('user', user.id, 'accounts_owned', accounts.filter((_a, i) => teams[i]?.role === 'admin'), true);
  return { q, schema, env, records, record };
}

/** How related items are chosen: `deep` and `alias` as every read applies them (attack pass 11, M: /users/me ignored deep). */
const relatedOf = (q: QueryNode, nestedLimit: number) => ({ deep: q.deep, alias: q.alias, nestedLimit });

/**
 * The legacy User object, shaped by `fields` (`/users/me`). `kept`: the room its render data took in the data room, handed
 * to the caller to give back once the answer is counted in the answer memory; `gone`: the answer's end.
 */
export async function legacyUser(
  deps: Deps, request: FastifyRequest, user: LegacyUser, kept?: KeptRoom, gone?: AbortSignal,
): Promise<Record<string, unknown>> {
  const { q, schema, env, records, record } = await userRecord(deps, request, user, gone);
  const project = compileProjection(q.fields, schema, deps.mappings.schemas, records, env.budget, relatedOf(q, env.nestedLimit));
  // (one item: its render data past MAX_ITEM_MB is refused before it is read)
  const out = await settleItem((f, most) => records.settle(f, most, kept?.keep), () => project(record), deps.config.MAX_ITEM_MB);
  await deps.ids.flush();
  return out;
}

/**
 * `GET /users` and `SEARCH /users`: the users the legacy role reads — its own user alone, as Directus 10.10 answers the
 * role (its permission on directus_users is the current user) — with the whole query language over that one record.
 */
async function legacyUsers(deps: Deps, request: FastifyRequest, user: LegacyUser, kept: KeptRoom, gone: AbortSignal): Promise<QueryResult> {
  const { q, schema, env, records, record } = await userRecord(deps, request, user, gone);
  // the projection charges the request's expansion budget (MAX_RELATED_ITEMS), as /users/me and every item read do
  const project = compileProjection(q.fields, schema, deps.mappings.schemas, records, env.budget, relatedOf(q, env.nestedLimit));
  const out = await settleItem((f, most) => records.settle(f, most, kept.keep), () => {
    const sel = selectRecords([record], q, deps.mappings.schemas, records, { numericStrings: true });
    const data = sel.rows ?? (sel.page ?? []).map(project);
    return sel.meta ? { meta: sel.meta, data } : { data };
  }, deps.config.MAX_ITEM_MB);
  await deps.ids.flush();
  return out;
}

/**
 * Sends a user answer serialised once and held in the answer memory until sent (its accounts' renders' data may make it
 * up to MAX_ITEM_MB: a reader that stops reading pins it, counted, as a read by id does).
 */
async function sendHeld(
  deps: Deps, request: FastifyRequest, reply: FastifyReply, answer: (kept: KeptRoom, gone: AbortSignal) => Promise<unknown>,
): Promise<FastifyReply> {
  const kept = new KeptRoom();
  try {
    // (a large answer's text is written a slice a turn of the event loop at a time: src/lib/json-in-turns.ts)
    const body = (await itemBytesInTurns(await answer(kept, answerEnd(reply.raw).gone))) ?? Buffer.from('null');
    await heldBytes(deps, requestContext(deps, request), reply, body.length);
    return reply.type('application/json; charset=utf-8').send(body);
  } finally {
    kept.release(); // (the answer is counted: its data's room goes)
  }
}

export function registerUserRoutes(app: FastifyInstance, deps: Deps): void {
  if (proxied(deps.config, '/users')) return;
  app.get('/users/me', async (request, reply) => {
    if (!request.principal) throw errors.invalidCredentials();
    const user = request.principal.user;
    return sendHeld(deps, request, reply, async (kept, gone) => ({ data: await legacyUser(deps, request, user, kept, gone) }));
  });

  // Directus's list of users, as the role reads it (Python clients look their user up with SEARCH /users)
  const list = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.principal) throw errors.forbidden();
    const user = request.principal.user;
    return sendHeld(deps, request, reply, async (kept, gone) => {
      const result = await legacyUsers(deps, request, user, kept, gone);
      return result.meta ? { meta: result.meta, data: result.data } : { data: result.data };
    });
  };
  app.get('/users', list);
  app.route({ method: 'SEARCH', url: '/users', preHandler: searchPreHandler, handler: list });

  app.patch('/users/me', async (request, reply) => {
    if (!request.principal) throw errors.invalidCredentials();
    const body = request.body ?? {};
    if (typeof body !== 'object' || Array.isArray(body)) throw errors.invalidPayload('Invalid payload.');
    // a field the legacy role may not update (password, role, admin_access, …) is refused as Directus refuses it, never
    // dropped with a 200 (a user who "changed" a password must not believe it changed)
    if (Object.keys(body).some((k) => !Object.hasOwn(PatchMe.shape, k))) throw errors.forbidden();
    const parsed = PatchMe.safeParse(body);
    if (!parsed.success) throw errors.invalidPayload(parsed.error.issues[0]?.message ?? 'Invalid payload.');
    try {
      const updated = await deps.users.update(request.principal.user.id, {
        ...(parsed.data.first_name !== undefined ? { firstName: parsed.data.first_name } : {}),
        ...(parsed.data.last_name !== undefined ? { lastName: parsed.data.last_name } : {}),
        ...(parsed.data.email !== undefined ? { email: parsed.data.email } : {}),
      });
      if (!updated) throw errors.invalidCredentials();
      return { data: await legacyUser(deps, request, updated, undefined, answerEnd(reply.raw).gone) };
    } catch (e) {
      if (e instanceof DuplicateEmailError) {
        throw errors.recordNotUnique('directus_users', 'email');
      }
      throw e;
    }
  });
}
