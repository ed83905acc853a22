import { errors } from '../errors/catalog.js';
import { fromV1Error } from '../errors/v1-errors.js';
import type { Catalog } from '../live/catalog.js';
import type { ExecEnv } from '../live/record-map.js';
import type { EarlierAttempt } from '../store/idempotency.js';
import { epochMs } from '../translate/time.js';
import { V1Error, V1NetworkError, V1NotFoundError, V1ServerError } from '../v1/errors.js';
import type { V1Session } from '../v1/client.js';
import { V1_PAGE_MAX, type V1Project, type V1Render } from '../v1/schemas.js';
import { chooseTemplate, renderName } from './template-choice.js';

export interface CreateRenderInput {
  readonly project: string;
  readonly account: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly title?: string;
}

export interface CreateRenderDeps {
  readonly env: ExecEnv;
  readonly session: V1Session;
  /** The v1 user of the key (`created_by` of the renders it creates). */
  readonly v1UserId: string;
  readonly templateRules: Readonly<Record<string, string>>;
  readonly lostResponseWindowMs: number;
  readonly clockSkewMs: number;
  readonly now: () => number;
  readonly log: { warn(o: object, msg: string): void; info(o: object, msg: string): void };
  /** Renders some request already holds (stored data or an idempotency record): never adopted. */
  readonly claimed: (v1Ids: readonly string[]) => Promise<Set<string>>;
  /** Told what is about to be created, before v1 is asked (a crash after it can be recovered). */
  readonly onAttempt?: (a: { startedAt: number; projectV1: string; name: string }) => Promise<void>;
  /** Told the render v1 created, as soon as it is known. */
  readonly onCreated?: (renderV1Id: string) => Promise<void>;
  /** An earlier attempt under the same Idempotency-Key whose outcome is not known: its render is looked for first. */
  readonly earlier?: EarlierAttempt;
}

/** `recorded`: the earlier attempt's own render (by its record); `found`: a render adopted after a lost answer. */
export type Recovery = false | 'recorded' | 'found';
export interface Created {
  readonly render: V1Render;
  readonly project: V1Project;
  readonly templateId: string | null;
  readonly recovered: Recovery;
}

const unknownOutcome = (why: string, name: string) =>
  errors.outcomeUnknown(
    `v1 did not confirm the render and the gateway cannot tell whether it was created (${why}). Retry with the same Idempotency-Key ` +
      `(the render is looked for first), or look for it: GET /renders?filter[title][_eq]=${encodeURIComponent(name)}`,
    { reason: 'outcome unknown', outcome: 'unknown' },
  );

/**
 * The renders a lost POST may have created: same project and name, created by the key's own v1 user, no earlier than the
 * attempt's start (less the clock-skew allowance) and within the window, claimed by no other request. Throws 503
 * "outcome unknown" when v1 cannot be asked.
 */
async function lostCandidates(d: CreateRenderDeps, projectV1: string, name: string, startedAt: number): Promise<V1Render[]> {
  let page: V1Render[];
  try {
    page = [...(await d.session.rendersPage(projectV1, { limit: V1_PAGE_MAX, order: 'desc' })).data];
  } catch (lookup) {
    throw unknownOutcome((lookup as Error).message, name);
  }
  const from = startedAt - d.clockSkewMs;
  const to = startedAt + d.lostResponseWindowMs;
  const matching = page.filter((r) => {
    const at = epochMs(r.created_at, d.env.timeUnit);
    return r.name === name && r.created_by === d.v1UserId && at >= from && at <= to;
  });
  const taken = await d.claimed(matching.map((r) => r.id));
  return matching.filter((r) => !taken.has(r.id));
}

/** The render an earlier attempt created, if it can be told: its recorded id, else a search. Undefined: not created. */
async function earlierRender(d: CreateRenderDeps, e: EarlierAttempt): Promise<{ render: V1Render; how: Recovery } | undefined> {
  if (e.renderV1Id) {
    try {
      return { render: await d.session.render(e.renderV1Id), how: 'recorded' };
    } catch (err) {
      if (!(err instanceof V1NotFoundError)) throw unknownOutcome((err as Error).message, e.name);
    }
  }
  const found = await lostCandidates(d, e.projectV1, e.name, e.startedAt);
  if (found.length > 1) throw unknownOutcome(`${found.length} renders named "${e.name}" could be the one`, e.name);
  return found[0] ? { render: found[0], how: 'found' } : undefined;
}

/**
 * Creates one v1 render for a legacy POST /renders. POST /v1/renders is never retried; when its answer is lost (or an
 * earlier attempt's outcome is unknown), the render it may have created is looked for — under strict rules, see
 * `lostCandidates` — before anything is created, and the answer says so when the gateway cannot tell.
 */
export async function createRender(input: CreateRenderInput, d: CreateRenderDeps): Promise<Created> {
  const { env } = d;
  const catalog: Catalog = env.catalog;
  const [projectId, teamId] = await Promise.all([env.ids.toV1('project', input.project), env.ids.toV1('account', input.account)]);
  // a project or account that does not exist is Directus's 400 INVALID_FOREIGN_KEY; one the key does not reach is answered
  // alike: nothing tells that it exists
  if (!projectId) throw errors.invalidForeignKey('renders', 'project');
  if (!teamId || !(await catalog.teams()).some((t) => t.id === teamId)) throw errors.invalidForeignKey('renders', 'account');
  const project = await catalog.project(projectId);
  if (!project) throw errors.invalidForeignKey('renders', 'project');
  if (project.team.id !== teamId) throw errors.invalidPayload(`The project ${input.project} is not under the account ${input.account}.`);

  if (d.earlier && d.earlier.projectV1 === project.id) {
    const got = await earlierRender(d, d.earlier);
    if (got) {
      d.log.info({ render: got.render.id, how: got.how }, 'an earlier attempt with this Idempotency-Key had created the render');
      return { render: got.render, project, templateId: null, recovered: got.how };
    }
  }

  let templateId: string | null = null;
  const rule = d.templateRules[input.project.toLowerCase()];
  if (rule) templateId = rule;
  else if (Object.keys(input.data).length > 0) {
    const summaries = await catalog.templatesOf(project.id);
    const full = await catalog.map(summaries, (t) => catalog.template(t.id, project.id));
    templateId = chooseTemplate(
      input.data,
      full.map((t) => ({ id: t.id, keys: t.fields.map((f) => f.key) })),
    ).templateId;
  }
  const name = renderName(input.title, input.data, project.name, new Date(d.now()));
  const started = d.now();
  await d.onAttempt?.({ startedAt: started, projectV1: project.id, name });
  try {
    const render = await d.session.createRender({
      name,
      project_id: project.id,
      ...(templateId ? { template_id: templateId } : {}),
      values: { ...input.data },
    });
    await d.onCreated?.(render.id);
    return { render, project, templateId, recovered: false };
  } catch (e) {
    if (!(e instanceof V1NetworkError || e instanceof V1ServerError)) throw e instanceof V1Error ? fromV1Error(e) : e;
    d.log.warn({ project: project.id, reason: e.message }, 'POST /v1/renders gave no answer; looking for the render it may have created');
    const found = await lostCandidates(d, project.id, name, started);
    if (found.length > 1) throw unknownOutcome(`${found.length} renders named "${name}" could be the one`, name);
    if (found[0]) {
      d.log.info({ render: found[0].id }, 'found the render whose creation answer was lost');
      await d.onCreated?.(found[0].id);
      return { render: found[0], project, templateId, recovered: 'found' };
    }
    throw errors.outcomeUnknown(
      `v1 did not confirm the render, and no render named "${name}" was created in the project since the request, so it was not created. ` +
        'Retrying (with the same Idempotency-Key) is safe.',
      { reason: 'not created', outcome: 'not_created' },
    );
  }
}
