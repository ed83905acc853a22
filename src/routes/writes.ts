import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requirePrincipal } from '../auth/guards.js';
import type { Deps } from '../deps.js';
import { errorEnvelope, errors } from '../errors/catalog.js';
import { toGatewayError } from '../errors/handler.js';
import { isUuid } from '../lib/uuid.js';
import { executeOne } from '../plan/execute.js';
import { RecordIndex } from '../plan/index.js';
import { planQuery } from '../plan/plan.js';
import { compileProjection } from '../query/project.js';
import type { ResourceSchema } from '../query/schema.js';
import { createRender } from '../write/create-render.js';
import { parseLegacyQuery, requestEnv } from '../http/context.js';
import { proxied } from '../config/route-modes.js';

const CreateBody = z.object({
  project: z.string({ error: '"project" is required' }).refine(isUuid, '"project" must be a valid GUID'),
  account: z.string({ error: '"account" is required' }).refine(isUuid, '"account" must be a valid GUID'),
  data: z.record(z.string(), z.unknown(), { error: '"data" is required and must be an object' }),
  title: z.string({ error: '"title" must be a string' }).max(10_000).optional(),
}).loose();

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

/** POST /renders (idempotent with Idempotency-Key) and the legacy PATCHes with write policies. */
export function registerWriteRoutes(app: FastifyInstance, deps: Deps): void {
  const inflight = new Map<string, { hash: string; promise: Promise<Answer> }>();
  const windowMs = deps.mappings.writes.idempotencyWindowHours * 3_600_000;

  async function create(request: FastifyRequest): Promise<Answer> {
    const principal = requirePrincipal(request);
    const body = request.body ?? {};
    const parsed = CreateBody.safeParse(body);
    if (!parsed.success) throw errors.invalidPayload(parsed.error.issues[0]?.message ?? 'Invalid payload.');
    // the query (fields) is checked before anything is created
    const q = parseLegacyQuery(deps, request, deps.mappings.schemas.render as ResourceSchema);
    const { env, session } = await requestEnv(deps, request);
    const result = await createRender({ project: parsed.data.project.toLowerCase(), account: parsed.data.account.toLowerCase(), data: parsed.data.data, ...(parsed.data.title !== undefined ? { title: parsed.data.title } : {}) }, {
      env, session, templateRules: deps.mappings.writes.templateRules, lostResponseWindowMs: deps.mappings.writes.lostResponseWindowSeconds * 1000, now: Date.now, log: request.log,
    });
    await deps.renderData.put(result.render.id, parsed.data.data, result.render.name, principal.user.id);
    env.catalog.rememberRender(result.render);
    const index = new RecordIndex(env);
    index.project(result.project);
    const [rec] = await index.renders([result.render]);
    const shaped = await index.settle(() => compileProjection(q.fields, deps.mappings.schemas.render as ResourceSchema, deps.mappings.schemas, index, env.budget)(rec!));
    await deps.ids.flush();
    return { status: 200, body: { data: shaped } };
  }

  const asAnswer = (e: unknown): Answer => {
    const ge = toGatewayError(e);
    return { status: ge.status, body: errorEnvelope(ge), headers: { ...ge.headers } };
  };

  async function handlePost(request: FastifyRequest, reply: FastifyReply) {
    const principal = requirePrincipal(request);
    const keyHeader = request.headers['idempotency-key'];
    const key = Array.isArray(keyHeader) ? keyHeader[0] : keyHeader;
    let answer: Answer;
    if (!key) {
      answer = await create(request).catch(asAnswer);
    } else {
      if (key.length > 255) throw errors.invalidPayload('Idempotency-Key must be at most 255 characters.');
      const hash = createHash('sha256').update(canonical(request.body ?? null)).digest('hex');
      const slot = `${principal.user.id}:${key}`;
      const mismatch = () => errors.invalidPayload('This Idempotency-Key was already used with a different request body.');
      const local = inflight.get(slot);
      if (local) {
        if (local.hash !== hash) throw mismatch();
        answer = await local.promise;
      } else {
        const promise = (async (): Promise<Answer> => {
          for (let waited = 0; ; waited += 100) {
            const row = await deps.idempotency.claim(principal.user.id, key, hash, windowMs);
            if (!row) break; // claimed: this request creates
            if (row.request_hash !== hash) return asAnswer(mismatch());
            if (row.state === 'done') return { status: row.status ?? 200, body: JSON.parse(row.response ?? 'null'), headers: { 'idempotent-replayed': 'true' } };
            if (row.state === 'unknown') { await deps.idempotency.release(principal.user.id, key); continue; }
            if (waited > 30_000) return asAnswer(errors.serviceUnavailable('An earlier request with this Idempotency-Key is still being processed.', 'gateway'));
            await new Promise((r) => setTimeout(r, 100));
          }
          const a = await create(request).catch(asAnswer);
          const body = a.body as { errors?: { extensions?: { outcome?: string } }[] };
          const outcome = body.errors?.[0]?.extensions?.outcome;
          if (a.status < 500) await deps.idempotency.finish(principal.user.id, key, 'done', a.status, a.body);
          else if (outcome === 'unknown') await deps.idempotency.finish(principal.user.id, key, 'unknown', a.status, a.body);
          else await deps.idempotency.release(principal.user.id, key); // nothing was created: a retry may create
          return a;
        })();
        inflight.set(slot, { hash, promise });
        try { answer = await promise; } finally { inflight.delete(slot); }
      }
    }
    for (const [k, v] of Object.entries(answer.headers ?? {})) void reply.header(k, v);
    return reply.status(answer.status).send(answer.body);
  }

  if (!proxied(deps.config, '/renders')) app.post('/renders', handlePost);

  const planning = { statusToV1: deps.mappings.status.toV1, schemas: deps.mappings.schemas };
  const patch = (path: string, resource: 'render' | 'project' | 'account') => proxied(deps.config, path) ? undefined : app.patch<{ Params: { id: string } }>(path, async (request) => {
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
      if (typeof value !== 'string' || value.length > 255) throw errors.invalidPayload(`"${field}" must be a string of at most 255 characters.`);
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
}
