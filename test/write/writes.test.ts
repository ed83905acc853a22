import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let token: string;
let project: { id: string; teamId: string; name: string; templates: { id: string; fields: { key: string }[] }[] };
beforeAll(async () => {
  gw = await startGateway({ V1_TIMEOUT_MS: '2000' }, {}, { simClock: true });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  await gw.get('/projects?limit=-1&fields=id', token); // legacy clients know the uuids they were given
  await gw.get('/accounts?limit=-1&fields=id', token);
  const reach = new Set(gw.s.keys[0]!.teams.map((t) => t.id));
  project = [...gw.s.sim.world.projects.values()].find((p) => reach.has(p.teamId) && p.templates.length >= 2 && gw.s.sim.world.teams.get(p.teamId)!.credits > 0) as never;
});
afterAll(async () => gw.close());
beforeEach(async () => { await fetch(`${gw.s.url}/_sim/faults`, { method: 'DELETE' }); });

const post = (payload: unknown, headers: Record<string, string> = {}, url = '/renders') =>
  gw.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}`, ...headers }, payload: payload as object });
const body = (data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ project: derivedUuid('project', project.id), account: derivedUuid('account', project.teamId), data, ...extra });
const rendersNamed = (name: string) => [...gw.s.sim.world.renders.values()].filter((r) => r.projectId === project.id && r.name === name);
const fault = (rules: unknown[]) => fetch(`${gw.s.url}/_sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rules }) });

describe('POST /renders', () => {
  it('creates a render with the best-covering template and answers 200 {data: <legacy render>}', async () => {
    const tpl = project.templates[1]!;
    const data = Object.fromEntries(tpl.fields.map((f) => [f.key, `v-${f.key}`]));
    const res = await post(body(data, { title: 'My render' }));
    expect(res.statusCode).toBe(200);
    const r = res.json().data;
    expect(r).toMatchObject({ title: 'My render', status: 'draft', project: derivedUuid('project', project.id), account: derivedUuid('account', project.teamId), data, output: null });
    const sim = rendersNamed('My render')[0]!;
    expect(sim.templateId).toBe(tpl.id);
    expect(gw.s.sim.world.renderConfig(sim.id)).toMatchObject(data);
    // the data round trip: later reads return what was sent
    const again = await gw.get(`/renders/${r.id}?fields=data,title`, token);
    expect(again.body.data).toEqual({ data, title: 'My render' });
  });

  it('accepts the trailing-slash path and names the render from data.title', async () => {
    const res = await post(body({ title: 'From data' }), {}, '/renders/');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.title).toBe('From data');
  });

  it.each([
    [{}, 'Invalid payload. "project" is required.'],
    [{ project: 'x', account: 'y', data: {} }, 'Invalid payload. "project" must be a valid GUID.'],
    [{ project: '7d444840-9dc0-11d1-b245-5ffdce74fad2', account: '7d444840-9dc0-11d1-b245-5ffdce74fad2' }, 'Invalid payload. "data" is required and must be an object.'],
  ])('rejects %j with 400 INVALID_PAYLOAD', async (payload, message) => {
    const res = await post(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0]).toMatchObject({ message, extensions: { code: 'INVALID_PAYLOAD' } });
  });

  it('checks the query before creating anything', async () => {
    const res = await post(body({ title: 'bad fields' }), {}, '/renders?fields=title.x');
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].extensions.code).toBe('INVALID_QUERY');
    expect(rendersNamed('bad fields')).toHaveLength(0);
  });

  it('rejects a project that is not under the account', async () => {
    const otherTeam = gw.s.keys[0]!.teams.find((t) => t.id !== project.teamId)!.id;
    const res = await post({ ...body({}), account: derivedUuid('account', otherTeam) });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].message).toMatch(/is not under the account/);
  });

  it('maps v1 errors into the legacy envelope', async () => {
    // unknown project → 400 INVALID_FOREIGN_KEY, as Directus answers a foreign key that does not exist
    const unknown = await post({ ...body({}), project: '7d444840-9dc0-11d1-b245-5ffdce74fad2' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().errors[0].extensions).toEqual({ code: 'INVALID_FOREIGN_KEY', collection: 'renders', field: 'project' });
    // 402: the team ran out of credits
    await fetch(`${gw.s.url}/_sim/credits`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ team_id: project.teamId, credits: 0 }) });
    const broke = await post(body({}, { title: 'broke' }));
    expect(broke.statusCode).toBe(402);
    expect(broke.json().errors[0].message).toMatch(/credits are exhausted/);
    await fetch(`${gw.s.url}/_sim/credits`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ team_id: project.teamId, credits: 1000 }) });
    // a v1 500 on the POST: nothing was created (the render is looked for), 503 SERVICE_UNAVAILABLE, safe to retry
    await fault([{ kind: 'error500', count: 1, method: 'POST' }]);
    const failed = await post(body({}, { title: 'five hundred' }));
    expect(failed.statusCode).toBe(503);
    expect(failed.json().errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    expect(failed.json().errors[0].extensions.outcome).toBe('not_created');
    expect(rendersNamed('five hundred')).toHaveLength(0);
  });

  it('maps a v1 400 (a template rule naming a template the project lacks) to 400 INVALID_PAYLOAD', async () => {
    const uuid = derivedUuid('project', project.id);
    (gw.deps.mappings.writes.templateRules as Record<string, string>)[uuid] = 'tpl_not_in_this_project';
    try {
      const res = await post(body({}, { title: 'bad rule' }));
      expect(res.statusCode).toBe(400);
      expect(res.json().errors[0]).toMatchObject({ extensions: { code: 'INVALID_PAYLOAD' } });
      expect(res.json().errors[0].message).toMatch(/not defined by project/);
    } finally {
      delete (gw.deps.mappings.writes.templateRules as Record<string, string>)[uuid];
    }
  });

  it('replays an Idempotency-Key answer, also to concurrent duplicates, and never bills twice', async () => {
    const payload = body({ title: 'idem' });
    const key = `k-${Date.now()}`;
    const answers = await Promise.all([1, 2, 3, 4].map(() => post(payload, { 'idempotency-key': key })));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.json().data.id)).size).toBe(1);
    expect(rendersNamed('idem')).toHaveLength(1);
    const later = await post(payload, { 'idempotency-key': key });
    expect(later.json().data.id).toBe(answers[0]!.json().data.id);
    expect(later.headers['idempotent-replayed']).toBe('true');
    const different = await post(body({ title: 'other' }), { 'idempotency-key': key });
    expect(different.statusCode).toBe(400);
    expect(different.json().errors[0].message).toMatch(/different request body/);
    // a request refused before v1 was asked does not use its key up: the corrected retry under the same key creates
    const retryKey = `k-retry-${Date.now()}`;
    const refused = await post(body({ title: 'idem retried' }, { project: 'not-a-uuid' }), { 'idempotency-key': retryKey });
    expect(refused.statusCode).toBe(400);
    const corrected = await post(body({ title: 'idem retried' }), { 'idempotency-key': retryKey });
    expect(corrected.statusCode).toBe(200);
    expect(rendersNamed('idem retried')).toHaveLength(1);
  });

  it('finds the render when v1 carried out the POST but the answer was lost: exactly one exists', async () => {
    await fault([{ kind: 'lost_response', count: 1, method: 'POST' }]);
    const res = await post(body({ title: 'lost answer' }), { 'idempotency-key': 'lost-1' });
    expect(res.statusCode).toBe(200);
    expect(rendersNamed('lost answer')).toHaveLength(1);
    expect(res.json().data.id).toBe(derivedUuid('render', rendersNamed('lost answer')[0]!.id));
    const retry = await post(body({ title: 'lost answer' }), { 'idempotency-key': 'lost-1' });
    expect(retry.json().data.id).toBe(res.json().data.id);
    expect(rendersNamed('lost answer')).toHaveLength(1);
  });

  it('says clearly when it cannot tell whether the render was created', async () => {
    await fault([{ kind: 'reset', count: 1, method: 'POST' }, { kind: 'error500', count: 10, method: 'GET', path: '/v1/renders' }]);
    const res = await post(body({ title: 'who knows' }));
    expect(res.statusCode).toBe(503);
    expect(res.json().errors[0].message).toMatch(/cannot tell whether it was created/);
  });
});

describe('PATCH with write policies', () => {
  it('overlays a title: later reads, filters and sorts see it; the report marks it', async () => {
    const list = (await gw.get('/renders?limit=1&fields=id,title', token)).body.data[0];
    const res = await gw.app.inject({ method: 'PATCH', url: `/render/${list.id}`, headers: { authorization: `Bearer ${token}` }, payload: { title: 'AAAA overlaid' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id: list.id, title: 'AAAA overlaid' });
    expect((await gw.get(`/renders/${list.id}?fields=title`, token)).body.data.title).toBe('AAAA overlaid');
    const filtered = await gw.get(`/renders?fields=id&filter[title][_eq]=AAAA overlaid`, token);
    expect(filtered.body.data).toEqual([{ id: list.id }]);
    const sorted = await gw.get(`/renders?fields=id,title&sort=title&limit=1&filter[title][_starts_with]=A`, token);
    expect(sorted.body.data[0].id).toBe(list.id);
    const p = (await gw.get('/projects?limit=1&fields=id', token)).body.data[0];
    const pr = await gw.app.inject({ method: 'PATCH', url: `/projects/${p.id}`, headers: { authorization: `Bearer ${token}` }, payload: { title: 'Renamed project' } });
    expect(pr.json().data.title).toBe('Renamed project');
    const a = (await gw.get('/accounts?limit=1&fields=id', token)).body.data[0];
    const ar = await gw.app.inject({ method: 'PATCH', url: `/accounts/${a.id}`, headers: { authorization: `Bearer ${token}` }, payload: { name: 'Renamed account' } });
    expect(ar.json().data.name).toBe('Renamed account');
  });

  it('rejects read-only fields with 403 saying so, and unknown items with 403', async () => {
    const r = (await gw.get('/renders?limit=1&fields=id', token)).body.data[0];
    const res = await gw.app.inject({ method: 'PATCH', url: `/renders/${r.id}`, headers: { authorization: `Bearer ${token}` }, payload: { status: 'complete' } });
    expect(res.statusCode).toBe(403);
    expect(res.json().errors[0].message).toMatch(/became read-only with the v1 API/);
    const missing = await gw.app.inject({ method: 'PATCH', url: '/renders/7d444840-9dc0-11d1-b245-5ffdce74fad2', headers: { authorization: `Bearer ${token}` }, payload: { title: 'x' } });
    expect(missing.statusCode).toBe(403);
    // a number is cast to its text, as Directus casts it; an object is no title
    const cast = await gw.app.inject({ method: 'PATCH', url: `/renders/${r.id}?fields=title`, headers: { authorization: `Bearer ${token}` }, payload: { title: 5 } });
    expect(cast.json()).toEqual({ data: { title: '5' } });
    const badType = await gw.app.inject({ method: 'PATCH', url: `/renders/${r.id}`, headers: { authorization: `Bearer ${token}` }, payload: { title: { a: 1 } } });
    expect(badType.statusCode).toBe(400);
  });
});
