import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requirePrincipal } from '../auth/guards.js';
import type { Deps } from '../deps.js';
import { errors } from '../errors/catalog.js';
import { toGatewayError } from '../errors/handler.js';
import { isUuid } from '../lib/uuid.js';
import { executeOne } from '../plan/execute.js';
import { RecordIndex } from '../plan/index.js';
import { planQuery } from '../plan/plan.js';
import { compileProjection } from '../query/project.js';
import type { ResourceSchema } from '../query/schema.js';
import { createRender } from '../write/create-render.js';
import { asAnswer, IdempotentCreation, type Answer, type KeyedAttempt } from '../write/idempotency.js';
import { parseLegacyQuery, requestEnv } from '../http/context.js';
import { proxied } from '../config/route-modes.js';

const CreateBody = z
  .object({
    project: z.string({ error: '"project" is required' }).refine(isUuid, '"project" must be a valid GUID'),
    account: z.string({ error: '"account" is required' }).refine(isUuid, '"account" must be a valid GUID'),
    data: z.record(z.string(), z.unknown(), { error: '"data" is required and must be an object' }),
    title: z.string({ error: '"title" must be a string' }).max(10_000).optional(),
  })
  .loose();

/** POST /renders (idempotent with Idempotency-Key) and the legacy PATCHes with write policies. */
export function registerWriteRoutes(app: FastifyInstance, deps: Deps): void {
  const w = deps.mappings.writes;
  const keyed = new IdempotentCreation(deps.idempotency, {
    windowMs: w.idempotencyWindowHours * 3_600_000,
    leaseMs: w.claimLeaseSeconds * 1000,
    waitMs: 30_000,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  });
  const claimed = async (ids: readonly string[]) =>
    new Set([...(await deps.renderData.claimed(ids)), ...(await deps.idempotency.claimedRenders(ids))]);
  const toAnswer = (e: unknown): Answer => asAnswer(toGatewayError(e));

  async function create(request: FastifyRequest, attempt?: KeyedAttempt): Promise<Answer> {
    const principal = requirePrincipal(request);
    const parsed = CreateBody.safeParse(request.body ?? {});
    if (!parsed.success) throw errors.invalidPayload(parsed.error.issues[0]?.message ?? 'Invalid payload.');
    // the query (fields) is checked before anything is created
    const q = parseLegacyQuery(deps, request, deps.mappings.schemas.render as ResourceSchema);
    const { env, session } = await requestEnv(deps, request);
    const input = {
      project: parsed.data.project.toLowerCase(),
      account: parsed.data.account.toLowerCase(),
      data: parsed.data.data,
      ...(parsed.data.title !== undefined ? { title: parsed.data.title } : {}),
    };
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
      if (!(await deps.renderData.claim(result.render.id, parsed.data.data, result.render.name, principal.user.id))) {
        throw errors.outcomeUnknown('v1 did not confirm the render, and the render found in its place is held by another request', {
          reason: 'outcome unknown',
          outcome: 'unknown',
        });
      }
    } else {
      await deps.renderData.put(result.render.id, parsed.data.data, result.render.name, principal.user.id);
    }
    env.catalog.rememberRender(result.render);
    // in the render index before the answer: the creator's next list shows it (other instances within the bus's delay)
    // v1 has made (and billed) the render: a failure to note it here must not fail the answer (the next sync finds it)
    await deps.index?.applyRender(result.render, { data: parsed.data.data })
      .catch((e: unknown) => request.log.warn({ err: e, render: result.render.id }, 'render index: the new render waits for the next sync'));
    const index = new RecordIndex(env);
    index.project(result.project);
    const [rec] = await index.renders([result.render]);
    const schema = deps.mappings.schemas.render as ResourceSchema;
    const related = { deep: q.deep, alias: q.alias, nestedLimit: env.nestedLimit };
    const shaped = await index.settle(() => compileProjection(q.fields, schema, deps.mappings.schemas, index, env.budget, related)(rec!));
    await deps.ids.flush();
    return { status: 200, body: { data: shaped } };
  }

  async function handlePost(request: FastifyRequest, reply: FastifyReply) {
    const principal = requirePrincipal(request);
    const keyHeader = request.headers['idempotency-key'];
    const key = Array.isArray(keyHeader) ? keyHeader[0] : keyHeader;
    // keys are scoped to the user: one user's key never answers another's request
    const answer = key
      ? await keyed.run(principal.user.id, key, request.body, (attempt) => create(request, attempt).catch(toAnswer))
      : await create(request).catch(toAnswer);
    for (const [k, v] of Object.entries(answer.headers ?? {})) void reply.header(k, v);
    return reply.status(answer.status).send(answer.body);
  }

  if (!proxied(deps.config, '/renders')) for (const url of ['/renders', '/items/renders']) app.post(url, handlePost);

  const planning = { statusToV1: deps.mappings.status.toV1, schemas: deps.mappings.schemas };
  const patch = (path: string, resource: 'render' | 'project' | 'account') =>
    proxied(deps.config, path)
      ? undefined
      : app.patch<{ Params: { id: string } }>(path, async (request) => {
          requirePrincipal(request);
          const body = request.body;
          if (!body || typeof body !== 'object' || Array.isArray(body)) throw errors.invalidPayload('The body must be a JSON object.');
          if (!isUuid(request.params.id)) throw errors.forbidden();
          const mapping = deps.mappings.resources[resource]!;
          const values: Record<string, unknown> = {};
          for (const [field, value] of Object.entries(body as Record<string, unknown>)) {
            const f = mapping.fields[field];
            if (!f) throw errors.forbidden(`You don't have permission to access this. "${field}" is not a field of ${mapping.collection}.`);
            const policy = f.write ?? 'reject';
            if (policy !== 'overlay') throw errors.readOnlyField(field, mapping.collection);
            if (typeof value !== 'string' || value.length > 255)
              throw errors.invalidPayload(`"${field}" must be a string of at most 255 characters.`);
            values[field] = value;
          }
          const q = parseLegacyQuery(deps, request, deps.mappings.schemas[resource] as ResourceSchema);
          const { env } = await requestEnv(deps, request);
          const plan = (x: typeof q) => planQuery(x, resource, planning);
          await executeOne(resource, request.params.id, q, plan, env); // 403 unless reachable
          const v1Id = await deps.ids.toV1(resource, request.params.id);
          if (!v1Id) throw errors.forbidden();
          if (Object.keys(values).length > 0) await deps.overlays.set(resource, v1Id, values, request.principal?.user.id ?? null);
          // read it back through the same request environment (its v1 reads are cached), with the new overlays
          const fresh = { ...env, overlays: { ...env.overlays, [resource]: await deps.overlays.ofType(resource) } };
          const data = await executeOne(resource, request.params.id, q, plan, fresh);
          await deps.ids.flush();
          return { data };
        });
  patch('/render/:id', 'render');
  patch('/renders/:id', 'render');
  patch('/projects/:id', 'project');
  patch('/accounts/:id', 'account');
  // the Directus SDK's updateItem
  patch('/items/renders/:id', 'render');
  patch('/items/projects/:id', 'project');
  patch('/items/accounts/:id', 'account');
}
