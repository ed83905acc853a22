import type { FastifyReply, FastifyRequest } from 'fastify';
import { requirePrincipal } from '../auth/guards.js';
import type { Deps } from '../deps.js';
import { errors } from '../errors/catalog.js';
import { toGatewayError } from '../errors/handler.js';
import { parseLegacyQuery, renderDataOf, requestEnv, type QueryDeps, type ReadEnvDeps } from '../read/context.js';
import { isUuid } from '../lib/uuid.js';
import { executeOne } from '../exec/live.js';
import { RecordMap } from '../live/record-map.js';
import { planQuery } from '../plan/plan.js';
import { compileProjection } from '../query/project.js';
import type { ResourceSchema } from '../query/schema.js';
import { answerEnd } from '../read/answer-end.js';
import { ItemReads } from '../read/items.js';
import { checkBatchLength, itemKey, runBatch, type ItemOutcome } from './batch.js';
import { patchByQuery } from './by-query.js';
import { createRender } from './create-render.js';
import { asAnswer, IdempotentCreation, type Answer, type KeyedAttempt } from './idempotency.js';
import { collectionFor, itemBody, writableValues, type Collection } from './permissions.js';

/** What POST /renders needs of an item beyond the role's permissions: a render is made in a project of an account, from data. */
function renderInput(values: Record<string, unknown>): { project: string; account: string; data: Record<string, unknown>; title?: string } {
  const { project, account, data, title } = values;
  for (const [field, v] of [['project', project], ['account', account]] as const) {
    if (v === undefined || v === null) throw errors.invalidPayload(`"${field}" is required`);
    if (typeof v !== 'string' || !isUuid(v)) throw errors.invalidPayload(`"${field}" must be a valid GUID`);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw errors.invalidPayload('"data" is required and must be an object');
  if (title !== undefined && title !== null && (typeof title !== 'string' || title.length > 10_000)) {
    throw errors.invalidPayload('"title" must be a string of at most 10000 characters');
  }
  return {
    project: (project as string).toLowerCase(), account: (account as string).toLowerCase(), data: data as Record<string, unknown>,
    ...(typeof title === 'string' ? { title } : {}),
  };
}

/** What the item writes use (given by the route file, from the composition root's set). */
export type ItemWritesDeps = ReadEnvDeps & QueryDeps & Pick<Deps, 'clock' | 'idempotency' | 'replica' | 'heavyReads' | 'answerMemory'>;

/**
 * The legacy writes as Directus answers them to the legacy role (mappings/permissions.json): POST /renders (one item or
 * an array; Idempotency-Key per item), PATCH of one item or several (`{keys, data}` or an array of items with their id),
 * `?fields=` on every answer; DELETE and unknown or system collections 403.
 */
export class ItemWrites {
  private readonly keyed: IdempotentCreation;
  /** The item reads a write by query resolves its items with (as a GET reads them), per resource. */
  private readonly reads = new Map<string, ItemReads>();
  constructor(private readonly deps: ItemWritesDeps) {
    const w = deps.mappings.writes;
    this.keyed = new IdempotentCreation(deps.idempotency, {
      windowMs: w.idempotencyWindowHours * 3_600_000,
      leaseMs: w.claimLeaseSeconds * 1000,
      waitMs: 30_000,
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    });
  }

  /** The item, checked as Directus checks it before anything is written (403 before 400, as the role's permissions come first). */
  private checkCreate(c: Collection, raw: unknown) {
    return renderInput(writableValues(c, 'create', itemBody(raw)));
  }

  /** POST /renders and /items/renders: one item, or an array made item by item. */
  async post(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const principal = requirePrincipal(request);
    const c = collectionFor(this.deps.mappings, 'renders', 'create');
    const keyHeader = request.headers['idempotency-key'];
    const key = Array.isArray(keyHeader) ? keyHeader[0] : keyHeader;
    const body: unknown = request.body;
    // keys are scoped to the user: one user's key never answers another's request
    const run = async (item: unknown, k: string | undefined, inArray: boolean): Promise<ItemOutcome> => {
      let id: string | undefined;
      const made = (attempt?: KeyedAttempt) => this.create(request, c, item, attempt).then((o) => { id = o.id; return o.answer; }, toAnswer);
      const answer = k ? await this.keyed.run(principal.user.id, k, item, made) : await made();
      if (id || answer.status >= 300) return { answer, ...(id ? { id } : {}) };
      // a replayed answer: its id, or (when ?fields= left it out) the render its key recorded — its place in an array
      const shown = idOf(answer);
      if (shown || !k || !inArray) return { answer, id: shown };
      const recorded = (await this.deps.idempotency.get(principal.user.id, k))?.render_v1_id;
      return { answer, ...(recorded ? { id: this.deps.ids.derive('render', recorded) } : {}) };
    };
    let answer: Answer;
    if (Array.isArray(body)) {
      parseLegacyQuery(this.deps, request, this.deps.mappings.schemas.render as ResourceSchema); // the query is checked first
      // capped (MAX_BATCH_MUTATION), and no render is made (and billed) once the client has gone
      const bounds = { max: this.deps.config.MAX_BATCH_MUTATION, gone: answerEnd(reply.raw).gone };
      answer = await runBatch(body, (item) => this.checkCreate(c, item), (item, i) => run(item, key ? itemKey(key, i) : undefined, true), bounds)
        .catch(toAnswer);
    } else answer = (await run(body, key, false)).answer;
    for (const [k, v] of Object.entries(answer.headers ?? {})) void reply.header(k, v);
    return reply.status(answer.status).send(answer.body);
  }

  /** One render: checked, created through v1 (with lost-response recovery), stored, indexed, shaped by `?fields=`. */
  private async create(request: FastifyRequest, c: Collection, item: unknown, attempt?: KeyedAttempt): Promise<{ answer: Answer; id: string }> {
    const deps = this.deps;
    const principal = requirePrincipal(request);
    const w = deps.mappings.writes;
    const input = this.checkCreate(c, item);
    // the query (fields) is checked before anything is created
    const q = parseLegacyQuery(deps, request, deps.mappings.schemas.render as ResourceSchema);
    // (render data is read only for the answer, once the render is made: its waits never end in a 503)
    const { env, session } = await requestEnv(deps, request, undefined, undefined, true);
    const claimed = async (ids: readonly string[]) =>
      new Set([...(await deps.renderData.claimed(ids)), ...(await deps.idempotency.claimedRenders(ids))]);
    const result = await createRender(input, {
      env,
      session,
      v1UserId: principal.user.v1UserId,
      templateRules: w.templateRules,
      lostResponseWindowMs: w.lostResponseWindowSeconds * 1000,
      clockSkewMs: w.clockSkewSeconds * 1000,
      now: () => deps.clock.now(),
      log: request.log,
      claimed,
      ...(attempt?.earlier ? { earlier: attempt.earlier } : {}),
      ...(attempt ? { onAttempt: attempt.onAttempt, onCreated: attempt.onCreated } : {}),
    });
    // stored data: a fresh render's, or the earlier attempt's own; a render adopted after a lost answer only if no request holds it
    if (result.recovered === 'found') {
      if (!(await deps.renderData.claim(result.render.id, input.data, result.render.name, principal.user.id))) {
        throw errors.outcomeUnknown('v1 did not confirm the render, and the render found in its place is held by another request', {
          reason: 'outcome unknown',
          outcome: 'unknown',
        });
      }
    } else {
      await deps.renderData.put(result.render.id, input.data, result.render.name, principal.user.id);
    }
    env.catalog.rememberRender(result.render);
    // in the render index before the answer: the creator's next list shows it (other instances within the bus's delay)
    // v1 has made (and billed) the render: a failure to note it here must not fail the answer (the next sync finds it)
    await deps.replica?.applyRender(result.render, { data: input.data })
      .catch((e: unknown) => request.log.warn({ err: e, render: result.render.id }, 'render records: the new render waits for the next sync'));
    const records = new RecordMap(env);
    records.project(result.project);
    const [rec] = records.renders([result.render]);
    const schema = deps.mappings.schemas.render as ResourceSchema;
    const related = { deep: q.deep, alias: q.alias, nestedLimit: env.nestedLimit };
    const shaped = await records.settle(() => compileProjection(q.fields, schema, deps.mappings.schemas, records, env.budget, related)(rec!));
    await deps.ids.flush();
    return { answer: { status: 200, body: { data: shaped } }, id: String(rec!.id) };
  }

  /** PATCH of one item: only the fields the role may update (kept as overlays), then the item read back with `?fields=`. */
  async patchOne(request: FastifyRequest, reply: FastifyReply, collection: string, id: string): Promise<{ data: unknown }> {
    requirePrincipal(request);
    const c = collectionFor(this.deps.mappings, collection, 'update');
    const values = writableValues(c, 'update', itemBody(request.body));
    checkOverlayValues(values);
    if (!isUuid(id)) throw errors.forbidden();
    const [data] = await this.update(request, answerEnd(reply.raw).gone, c, [id.toLowerCase()], values);
    return { data };
  }

  /**
   * PATCH of several items: `{keys: [...], data: {...}}`, `{query: {...}, data: {...}}` (the items the query reads:
   * src/write/by-query.ts), or an array of items each with its `id`; answered in primary-key order. Arrays and key lists
   * are capped (MAX_BATCH_MUTATION).
   */
  async patchMany(request: FastifyRequest, reply: FastifyReply, collection: string): Promise<FastifyReply | { data: unknown[] }> {
    requirePrincipal(request);
    const c = collectionFor(this.deps.mappings, collection, 'update');
    const body: unknown = request.body;
    const max = this.deps.config.MAX_BATCH_MUTATION;
    const changes: { id: string; values: Record<string, unknown> }[] = [];
    if (Array.isArray(body)) {
      checkBatchLength(body.length, max);
      for (const raw of body) {
        const { id, ...rest } = itemBody(raw);
        const values = writableValues(c, 'update', rest);
        checkOverlayValues(values);
        if (typeof id !== 'string' || !isUuid(id)) throw errors.forbidden();
        changes.push({ id: id.toLowerCase(), values });
      }
    } else {
      const { keys: listed, query, data } = itemBody(body);
      if (data === undefined) throw errors.invalidPayload('"data" is required');
      const values = writableValues(c, 'update', itemBody(data));
      checkOverlayValues(values);
      // `{query, data}` (the SDK's updateItems with a query): the items the query reads, as a GET reads them
      if (query !== undefined && listed === undefined) {
        const resource = c.resource as 'render' | 'project' | 'account';
        return patchByQuery(this.deps, request, reply, this.readsOf(resource), resource, query, values);
      }
      const keys = listed;
      if (!Array.isArray(keys)) throw errors.invalidPayload('"keys" or "query" is required');
      checkBatchLength(keys.length, max);
      for (const k of keys) {
        if (typeof k !== 'string' || !isUuid(k)) throw errors.forbidden();
        changes.push({ id: k.toLowerCase(), values });
      }
    }
    const ids = [...new Set(changes.map((x) => x.id))].sort();
    // every item is checked (reachable, else 403) before any is changed
    const data = await this.update(request, answerEnd(reply.raw).gone, c, ids, undefined, changes);
    return { data };
  }

  private readsOf(resource: string): ItemReads {
    let r = this.reads.get(resource);
    if (!r) {
      r = new ItemReads(this.deps, resource, this.deps.mappings.schemas[resource] as ResourceSchema, this.deps.heavyReads);
      this.reads.set(resource, r);
    }
    return r;
  }

  /**
   * Checks that every item is reachable (403 otherwise, before anything is written), writes the values as overlays, and
   * reads the items back through the same request environment (its v1 reads are cached), with the new overlays. `gone`:
   * the answer's end (a wait for room in the data room ends with it).
   */
  private async update(
    request: FastifyRequest, gone: AbortSignal, c: Collection, ids: readonly string[], values?: Record<string, unknown>,
    changes: readonly { id: string; values: Record<string, unknown> }[] = ids.map((id) => ({ id, values: values ?? {} })),
  ): Promise<unknown[]> {
    const deps = this.deps;
    const resource = c.resource as 'render' | 'project' | 'account';
    const q = parseLegacyQuery(deps, request, deps.mappings.schemas[resource] as ResourceSchema);
    const { env, session } = await requestEnv(deps, request, undefined, gone);
    const planning = { statusToV1: deps.mappings.status.toV1, schemas: deps.mappings.schemas };
    const plan = (x: typeof q) => planQuery(x, resource, planning);
    const v1Ids = new Map<string, string>();
    for (const id of ids) {
      await executeOne(resource, id, q, plan, env); // 403 unless reachable
      const v1Id = await deps.ids.toV1(resource, id);
      if (!v1Id) throw errors.forbidden();
      v1Ids.set(id, v1Id);
    }
    const userId = request.principal?.user.id ?? null;
    // (one transaction, one change published)
    await deps.overlays.setMany(resource, changes.map((ch) => ({ v1Id: v1Ids.get(ch.id)!, values: ch.values })), userId);
    // (read back once written: its waits for room never end in a 503)
    const fresh = {
      ...env, overlays: { ...env.overlays, [resource]: await deps.overlays.ofType(resource) }, renderData: renderDataOf(deps, session.partition, gone, true),
    };
    const out: unknown[] = [];
    for (const id of ids) out.push(await executeOne(resource, id, q, plan, fresh));
    await deps.ids.flush();
    return out;
  }
}

/** Overlay values are what a legacy title or name was: text of at most 255 characters (Directus's string columns). */
function checkOverlayValues(values: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(values)) {
    if (typeof value !== 'string' || value.length > 255) throw errors.invalidPayload(`"${field}" must be a string of at most 255 characters`);
  }
}

const toAnswer = (e: unknown): Answer => asAnswer(toGatewayError(e));
const idOf = (a: Answer): string => String(((a.body as { data?: { id?: unknown } }).data ?? {}).id ?? '');
