import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/catalog.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { ExecEnv } from '../../src/live/record-map.js';
import type { EarlierAttempt } from '../../src/store/idempotency.js';
import type { V1Session } from '../../src/v1/client.js';
import { V1BadRequestError, V1NetworkError, V1NotFoundError, V1PaymentRequiredError, V1ServerError, V1UnauthorizedError } from '../../src/v1/errors.js';
import type { V1Project, V1Render } from '../../src/v1/schemas.js';
import { createRender, type CreateRenderDeps } from '../../src/write/create-render.js';

/**
 * createRender against hand-made fakes (catalog, id translator, v1 session): every rule of the lost-answer recovery,
 * with the time on a manual clock and v1 timestamps in milliseconds.
 */
const P_UUID = 'aaaaaaaa-0000-4000-8000-000000000001';
const A_UUID = 'aaaaaaaa-0000-4000-8000-000000000002';
const T0 = Date.UTC(2026, 0, 1);
const WINDOW = 120_000;
const SKEW = 5_000;

const project: V1Project = { id: 'proj_1', name: 'Promo', team: { id: 'team_1', name: 'T' }, created_by: null, thumbnail_url: null, created_at: 1, updated_at: null };
const v1Render = (over: Partial<V1Render> = {}): V1Render => ({
  id: 'rend_new',
  name: 'My render',
  status: 'initializing',
  type: 'video',
  project: { id: 'proj_1', team: 'team_1' },
  created_by: 'user_me',
  created_at: T0,
  updated_at: null,
  ...over,
} as V1Render);

interface Options {
  ids?: Record<string, string>;
  teams?: string[];
  projects?: V1Project[];
  templates?: { id: string; keys: string[] }[];
  page?: V1Render[] | Error;
  create?: V1Render | Error;
  recorded?: Record<string, V1Render | Error>;
  claimed?: string[];
  rules?: Record<string, string>;
  earlier?: EarlierAttempt;
}

function harness(o: Options = {}) {
  const clock = new ManualClock(T0);
  const calls: unknown[][] = [];
  /** What the catalog (so v1) was asked about the project and the teams. */
  const asked: string[] = [];
  const ids = o.ids ?? { [`project:${P_UUID}`]: 'proj_1', [`account:${A_UUID}`]: 'team_1' };
  const projects = o.projects ?? [project];
  const templates = o.templates ?? [];
  const env = {
    timeUnit: 'ms',
    ids: { toV1: async (type: string, uuid: string) => ids[`${type}:${uuid}`] },
    catalog: {
      teams: async () => { asked.push('teams'); return (o.teams ?? ['team_1', 'team_2']).map((id) => ({ id })); },
      project: async (id: string) => { asked.push(`project ${id}`); return projects.find((p) => p.id === id); },
      templatesOf: async (projectId: string) => { calls.push(['templatesOf', projectId]); return templates.map((t) => ({ id: t.id })); },
      map: <T, R>(items: readonly T[], fn: (t: T) => Promise<R>) => Promise.all(items.map(fn)),
      template: async (id: string, projectId: string) => ({ id, projectId, fields: templates.find((t) => t.id === id)!.keys.map((key) => ({ key })) }),
    },
  } as unknown as ExecEnv;
  const session = {
    rendersPage: async (projectId: string, q: unknown) => {
      calls.push(['rendersPage', projectId, q]);
      if (o.page instanceof Error) throw o.page;
      return { data: o.page ?? [], has_more: false, next_cursor: null };
    },
    render: async (id: string) => {
      calls.push(['render', id]);
      const r = o.recorded?.[id];
      if (!r) throw new V1NotFoundError('gone', 404, 'GET', `/v1/renders/${id}`);
      if (r instanceof Error) throw r;
      return r;
    },
    createRender: async (body: unknown) => {
      calls.push(['createRender', body]);
      clock.advance(10); // v1 takes a little time
      if (o.create instanceof Error) throw o.create;
      return o.create ?? v1Render();
    },
  } as unknown as V1Session;
  const logs: { level: string; o: object; msg: string }[] = [];
  const deps: CreateRenderDeps = {
    env,
    session,
    v1UserId: 'user_me',
    templateRules: o.rules ?? {},
    lostResponseWindowMs: WINDOW,
    clockSkewMs: SKEW,
    now: () => clock.now(),
    log: { warn: (x, msg) => void logs.push({ level: 'warn', o: x, msg }), info: (x, msg) => void logs.push({ level: 'info', o: x, msg }) },
    claimed: async (v1Ids) => { calls.push(['claimed', [...v1Ids]]); return new Set((o.claimed ?? []).filter((c) => v1Ids.includes(c))); },
    onAttempt: async (a) => void calls.push(['onAttempt', a]),
    onCreated: async (id) => void calls.push(['onCreated', id]),
    ...(o.earlier ? { earlier: o.earlier } : {}),
  };
  return { deps, calls, asked, logs, clock, names: () => calls.map((c) => c[0]) };
}
const input = (over: Partial<{ project: string; account: string; data: Record<string, unknown>; title: string }> = {}) => ({
  project: P_UUID,
  account: A_UUID,
  data: {},
  title: 'My render',
  ...over,
});
const fail = async (p: Promise<unknown>) => {
  const e = await p.then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(GatewayError);
  return e as GatewayError;
};
const lost = () => new V1NetworkError('socket hang up', 'POST', '/v1/renders', false, null);

describe('createRender: who may create where', () => {
  it('creates the render and tells what it is about to create, then what v1 created', async () => {
    const h = harness();
    const got = await createRender(input({ data: { a: 1 } }), h.deps);
    expect(got).toEqual({ render: v1Render(), project, templateId: null, recovered: false });
    expect(h.calls.filter((c) => c[0] !== 'templatesOf')).toEqual([
      ['onAttempt', { startedAt: T0, projectV1: 'proj_1', name: 'My render' }],
      ['createRender', { name: 'My render', project_id: 'proj_1', values: { a: 1 } }],
      ['onCreated', 'rend_new'],
    ]);
  });

  it('names the render after the project and the time when there is no title', async () => {
    const h = harness();
    await createRender({ project: P_UUID, account: A_UUID, data: {} }, h.deps);
    expect(h.calls.find((c) => c[0] === 'onAttempt')![1]).toEqual({ startedAt: T0, projectV1: 'proj_1', name: `Promo ${new Date(T0).toISOString()}` });
  });

  it.each([
    ['an unknown project uuid', { ids: { [`account:${A_UUID}`]: 'team_1' } }, [], 'project'],
    ['an unknown account uuid', { ids: { [`project:${P_UUID}`]: 'proj_1' } }, [], 'account'],
    ['an account the key does not reach', { teams: ['team_2'] }, ['teams'], 'account'],
    ['a project v1 does not show the key', { projects: [] }, ['teams', 'project proj_1'], 'project'],
  ])('%s: 400 INVALID_FOREIGN_KEY (Directus\'s answer; unreachable alike), nothing created, v1 asked no more than needed', async (_, o, asked, field) => {
    const h = harness(o as Options);
    const e = await fail(createRender(input(), h.deps));
    expect(e.status).toBe(400);
    expect(e.code).toBe('INVALID_FOREIGN_KEY');
    expect(e.extensions).toEqual({ collection: 'renders', field });
    expect(h.names()).toEqual([]);
    expect(h.asked).toEqual(asked);
  });

  it('looks the uuids up by their own type', async () => {
    // the same uuids under swapped types are unknown
    const h = harness({ ids: { [`account:${P_UUID}`]: 'proj_1', [`project:${A_UUID}`]: 'team_1' } });
    expect((await fail(createRender(input(), h.deps))).code).toBe('INVALID_FOREIGN_KEY');
  });

  it('a project under another reachable account: 400 naming both', async () => {
    const h = harness({ projects: [{ ...project, team: { id: 'team_2', name: 'Other' } }] });
    const e = await fail(createRender(input(), h.deps));
    expect(e.status).toBe(400);
    expect(e.message).toBe(`Invalid payload. The project ${P_UUID} is not under the account ${A_UUID}.`);
    expect(h.names()).toEqual([]);
  });
});

describe('createRender: the template', () => {
  const templates = [
    { id: 'tpl_a', keys: ['title'] },
    { id: 'tpl_b', keys: ['title', 'color'] },
  ];
  it('is the one covering most data keys, sent to v1 as template_id', async () => {
    const h = harness({ templates });
    const got = await createRender(input({ data: { title: 'x', color: 'red' } }), h.deps);
    expect(got.templateId).toBe('tpl_b');
    expect(h.calls).toContainEqual(['templatesOf', 'proj_1']);
    expect(h.calls).toContainEqual(['createRender', { name: 'My render', project_id: 'proj_1', template_id: 'tpl_b', values: { title: 'x', color: 'red' } }]);
  });

  it('an explicit rule for the project uuid (any case) wins without looking at the templates', async () => {
    const h = harness({ templates, rules: { [P_UUID]: 'tpl_rule' } });
    const got = await createRender(input({ project: P_UUID.toUpperCase(), data: { title: 'x' } }), { ...h.deps, env: { ...h.deps.env, ids: { toV1: async (t: string, u: string) => (t === 'project' ? 'proj_1' : u === A_UUID ? 'team_1' : undefined) } } as unknown as ExecEnv });
    expect(got.templateId).toBe('tpl_rule');
    expect(h.names()).not.toContain('templatesOf');
    expect(h.calls).toContainEqual(['createRender', { name: 'My render', project_id: 'proj_1', template_id: 'tpl_rule', values: { title: 'x' } }]);
  });

  it('no data: no template, the templates are not even listed', async () => {
    const h = harness({ templates });
    expect((await createRender(input(), h.deps)).templateId).toBeNull();
    expect(h.names()).not.toContain('templatesOf');
  });

  it('sends a copy of the data, not the caller\'s object', async () => {
    const h = harness();
    const data = { n: 1 };
    await createRender(input({ data }), h.deps);
    const sent = (h.calls.find((c) => c[0] === 'createRender')![1] as { values: object }).values;
    expect(sent).toEqual({ n: 1 });
    expect(sent).not.toBe(data);
  });
});

describe('createRender: v1 refuses', () => {
  it.each([
    [new V1PaymentRequiredError('x', 402, 'POST', '/v1/renders'), 402, 'PAYMENT_REQUIRED'],
    [new V1BadRequestError('v1 POST /v1/renders answered 400: bad template', 400, 'POST', '/v1/renders'), 400, 'INVALID_PAYLOAD'],
    [new V1UnauthorizedError('x', 401, 'POST', '/v1/renders'), 401, 'INVALID_CREDENTIALS'],
  ])('%s is answered in the legacy envelope, nothing is looked for', async (err, status, code) => {
    const h = harness({ create: err });
    const e = await fail(createRender(input(), h.deps));
    expect([e.status, e.code]).toEqual([status, code]);
    expect(h.names()).not.toContain('rendersPage');
  });

  it('an error that is not from v1 is thrown as it is', async () => {
    const boom = new TypeError('boom');
    const h = harness({ create: boom });
    await expect(createRender(input(), h.deps)).rejects.toBe(boom);
    expect(h.names()).not.toContain('rendersPage');
  });
});

describe('createRender: a lost answer', () => {
  const at = (ms: number, over: Partial<V1Render> = {}) => v1Render({ id: `rend_${ms}`, created_at: T0 + ms, ...over });

  it('looks at the newest page of the project and adopts the one render the request may have created', async () => {
    const h = harness({ create: lost(), page: [at(3_000)] });
    const got = await createRender(input({ data: { title: 'x' } }), h.deps);
    expect(got).toEqual({ render: at(3_000), project, templateId: null, recovered: 'found' });
    expect(h.calls).toContainEqual(['rendersPage', 'proj_1', { limit: 60, order: 'desc' }]);
    expect(h.calls.at(-1)).toEqual(['onCreated', 'rend_3000']);
    expect(h.logs).toEqual([
      { level: 'warn', o: { project: 'proj_1', reason: 'socket hang up' }, msg: 'POST /v1/renders gave no answer; looking for the render it may have created' },
      { level: 'info', o: { render: 'rend_3000' }, msg: 'found the render whose creation answer was lost' },
    ]);
  });

  it('also after a v1 server error', async () => {
    const h = harness({ create: new V1ServerError('500', 500, 'POST', '/v1/renders'), page: [at(0)] });
    expect((await createRender(input(), h.deps)).recovered).toBe('found');
  });

  it('keeps the template it chose when it adopts', async () => {
    const h = harness({ create: lost(), page: [at(0)], templates: [{ id: 'tpl_a', keys: ['k'] }] });
    expect(await createRender(input({ data: { k: 1 } }), h.deps)).toMatchObject({ templateId: 'tpl_a', recovered: 'found' });
  });

  it.each([
    ['the skew allowance before the start', -SKEW, true],
    ['just before the skew allowance', -SKEW - 1, false],
    ['the end of the window', WINDOW, true],
    ['just after the window', WINDOW + 1, false],
  ])('a render created at %s: adopted %s', async (_, offset, adopted) => {
    const h = harness({ create: lost(), page: [at(offset)] });
    const run = createRender(input(), h.deps);
    if (adopted) expect((await run).render.id).toBe(`rend_${offset}`);
    else expect((await fail(run)).extensions).toMatchObject({ outcome: 'not_created', reason: 'not created' });
  });

  it('never adopts a render of another name, another v1 user, or one another request holds', async () => {
    const h = harness({
      create: lost(),
      page: [at(1, { name: 'Other' }), at(2, { created_by: 'user_else' }), at(3, { created_by: null }), at(4)],
      claimed: ['rend_4'],
    });
    const e = await fail(createRender(input(), h.deps));
    expect(e.status).toBe(503);
    expect(e.extensions).toEqual({ service: 'v1', reason: 'not created', outcome: 'not_created' });
    expect(e.message).toBe(
      'Service "v1" is unavailable. v1 did not confirm the render, and no render named "My render" was created in the project since the request, so it was not created. Retrying (with the same Idempotency-Key) is safe.',
    );
    // only the one matching candidate is asked about
    expect(h.calls).toContainEqual(['claimed', ['rend_4']]);
    expect(h.names()).not.toContain('onCreated');
  });

  it('two candidates: "outcome unknown", never a guess', async () => {
    const h = harness({ create: lost(), page: [at(1), at(2)] });
    const e = await fail(createRender(input({ title: 'My render' }), h.deps));
    expect(e.extensions).toEqual({ service: 'v1', reason: 'outcome unknown', outcome: 'unknown' });
    expect(e.message).toBe(
      'Service "v1" is unavailable. v1 did not confirm the render and the gateway cannot tell whether it was created (2 renders named "My render" could be the one). ' +
        'Retry with the same Idempotency-Key (the render is looked for first), or look for it: GET /renders?filter[title][_eq]=My%20render',
    );
    expect(h.names()).not.toContain('onCreated');
  });

  it('v1 cannot be asked: "outcome unknown" with the reason', async () => {
    const h = harness({ create: lost(), page: new Error('list failed') });
    const e = await fail(createRender(input({ title: 'a&b' }), h.deps));
    expect(e.extensions).toMatchObject({ outcome: 'unknown' });
    expect(e.message).toContain('cannot tell whether it was created (list failed)');
    expect(e.message).toContain('filter[title][_eq]=a%26b');
  });

  it('the window starts when v1 is asked (the start recorded by onAttempt)', async () => {
    const h = harness({ create: lost(), page: [] });
    h.clock.advance(1_000);
    await fail(createRender(input(), h.deps));
    expect(h.calls.find((c) => c[0] === 'onAttempt')![1]).toMatchObject({ startedAt: T0 + 1_000 });
  });
});

describe('createRender: an earlier attempt under the same key', () => {
  const earlier = (over: Partial<EarlierAttempt> = {}): EarlierAttempt => ({ startedAt: T0 - 60_000, projectV1: 'proj_1', name: 'Earlier', renderV1Id: null, ...over });
  const made = (over: Partial<V1Render> = {}) => v1Render({ id: 'rend_old', name: 'Earlier', created_at: T0 - 59_000, ...over });

  it('its recorded render is answered without creating another', async () => {
    const h = harness({ earlier: earlier({ renderV1Id: 'rend_old' }), recorded: { rend_old: made() } });
    const got = await createRender(input(), h.deps);
    expect(got).toEqual({ render: made(), project, templateId: null, recovered: 'recorded' });
    expect(h.names()).toEqual(['render']);
    expect(h.logs).toEqual([{ level: 'info', o: { render: 'rend_old', how: 'recorded' }, msg: 'an earlier attempt with this Idempotency-Key had created the render' }]);
  });

  it('a recorded render v1 no longer has: looked for by name around the earlier start', async () => {
    const h = harness({ earlier: earlier({ renderV1Id: 'rend_gone' }), page: [made()] });
    const got = await createRender(input(), h.deps);
    expect(got.recovered).toBe('found');
    expect(got.render.id).toBe('rend_old');
    expect(h.names()).toEqual(['render', 'rendersPage', 'claimed']);
  });

  it('the recorded render cannot be read: "outcome unknown" naming the earlier render name', async () => {
    const h = harness({ earlier: earlier({ renderV1Id: 'rend_old' }), recorded: { rend_old: new V1ServerError('v1 is down', 500, 'GET', '/v1/renders/rend_old') } });
    const e = await fail(createRender(input(), h.deps));
    expect(e.extensions).toMatchObject({ outcome: 'unknown' });
    expect(e.message).toContain('(v1 is down)');
    expect(e.message).toContain('filter[title][_eq]=Earlier');
    expect(h.names()).toEqual(['render']);
  });

  it('nothing recorded: searched with the earlier start, not this request\'s', async () => {
    // created 59 s before this request, after the earlier attempt's start: only the earlier window finds it
    const h = harness({ earlier: earlier(), page: [made()] });
    expect((await createRender(input(), h.deps)).render.id).toBe('rend_old');
  });

  it('not found: this request creates the render', async () => {
    const h = harness({ earlier: earlier(), page: [made({ name: 'Someone else' })] });
    const got = await createRender(input(), h.deps);
    expect(got.recovered).toBe(false);
    expect(h.names()).toEqual(['rendersPage', 'claimed', 'onAttempt', 'createRender', 'onCreated']);
  });

  it('two candidates for the earlier attempt: "outcome unknown", nothing created', async () => {
    const h = harness({ earlier: earlier(), page: [made(), made({ id: 'rend_old2' })] });
    const e = await fail(createRender(input(), h.deps));
    expect(e.message).toContain('2 renders named "Earlier" could be the one');
    expect(h.names()).not.toContain('createRender');
  });

  it('an earlier attempt on another project is not looked for', async () => {
    const h = harness({ earlier: earlier({ projectV1: 'proj_other', renderV1Id: 'rend_old' }), recorded: { rend_old: made() } });
    expect((await createRender(input(), h.deps)).recovered).toBe(false);
    expect(h.names()).not.toContain('render');
  });
});
