import { errors } from '../errors/catalog.js';
import { fromV1Error } from '../errors/v1-errors.js';
import type { Catalog } from '../plan/catalog.js';
import type { ExecEnv } from '../plan/index.js';
import { V1Error, V1NetworkError, V1ServerError } from '../v1/errors.js';
import type { V1Session } from '../v1/client.js';
import { V1_PAGE_MAX, type V1Project, type V1Render } from '../v1/schemas.js';
import { chooseTemplate, renderName } from './template-choice.js';

export interface CreateRenderInput { readonly project: string; readonly account: string; readonly data: Readonly<Record<string, unknown>>; readonly title?: string }

export interface CreateRenderDeps {
  readonly env: ExecEnv;
  readonly session: V1Session;
  readonly templateRules: Readonly<Record<string, string>>;
  readonly lostResponseWindowMs: number;
  readonly now: () => number;
  readonly log: { warn(o: object, msg: string): void; info(o: object, msg: string): void };
}

/**
 * Creates one v1 render for a legacy POST /renders. POST /v1/renders is never retried; when its answer
 * is lost, the render it may have created is looked for (same project, same name, created within the
 * window) before answering, and the answer says so when the gateway cannot tell.
 */
export async function createRender(input: CreateRenderInput, d: CreateRenderDeps): Promise<{ render: V1Render; project: V1Project; templateId: string | null; recovered: boolean }> {
  const { env } = d;
  const catalog: Catalog = env.catalog;
  const [projectId, teamId] = await Promise.all([env.ids.toV1('project', input.project), env.ids.toV1('account', input.account)]);
  if (!projectId || !teamId) throw errors.forbidden();
  const project = await catalog.project(projectId);
  if (!project) throw errors.forbidden();
  if (project.team.id !== teamId) {
    throw errors.invalidPayload(`The project ${input.project} is not under the account ${input.account}.`);
  }
  let templateId: string | null = null;
  const rule = d.templateRules[input.project.toLowerCase()];
  if (rule) templateId = rule;
  else if (Object.keys(input.data).length > 0) {
    const summaries = await catalog.templatesOf(project.id);
    const full = await catalog.map(summaries, (t) => catalog.template(t.id, project.id));
    templateId = chooseTemplate(input.data, full.map((t) => ({ id: t.id, keys: t.fields.map((f) => f.key) }))).templateId;
  }
  const name = renderName(input.title, input.data, project.name, new Date(d.now()));
  const started = d.now();
  try {
    const render = await d.session.createRender({ name, project_id: project.id, ...(templateId ? { template_id: templateId } : {}), values: { ...input.data } });
    return { render, project, templateId, recovered: false };
  } catch (e) {
    if (!(e instanceof V1NetworkError || e instanceof V1ServerError)) throw e instanceof V1Error ? fromV1Error(e) : e;
    d.log.warn({ project: project.id, reason: e.message }, 'POST /v1/renders gave no answer; looking for the render it may have created');
    let found: V1Render | undefined;
    try {
      const page = await d.session.rendersPage(project.id, { limit: V1_PAGE_MAX, order: 'desc' });
      const since = Math.floor((started - d.lostResponseWindowMs) / 1000);
      const candidates = page.data.filter((r) => r.name === name && (r.created_at > 1e11 ? r.created_at / 1000 : r.created_at) >= since);
      found = candidates[0];
    } catch (lookup) {
      throw errors.outcomeUnknown(`v1 did not confirm the render and the gateway cannot tell whether it was created (${(lookup as Error).message}). Before retrying, look for it: GET /renders?filter[title][_eq]=${encodeURIComponent(name)}`, { reason: 'outcome unknown', outcome: 'unknown' });
    }
    if (found) {
      d.log.info({ render: found.id }, 'found the render whose creation answer was lost');
      return { render: found, project, templateId, recovered: true };
    }
    throw errors.outcomeUnknown(`v1 did not confirm the render, and no render named "${name}" was created in the project since the request, so it was not created. Retrying (with the same Idempotency-Key) is safe.`, { reason: 'not created', outcome: 'not_created' });
  }
}
