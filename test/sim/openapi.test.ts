import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startSim, type RunningSim } from '../helpers/sim.js';

let s: RunningSim;
let doc: any;
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
beforeAll(async () => { s = await startSim(); doc = (await call(s.url, '/openapi.json')).body; });
afterAll(async () => s.sim.close());

/** Validates an answer against the documented response of `method path` for its status. */
function conforms(pathTemplate: string, method: string, status: number, body: unknown): void {
  const op = doc.paths[pathTemplate]?.[method];
  expect(op, `${method} ${pathTemplate} documented`).toBeDefined();
  const resp = op.responses[String(status)];
  expect(resp, `${method} ${pathTemplate} documents ${status}`).toBeDefined();
  const schema = resp.content['application/json'].schema;
  const validate = ajv.compile(schema);
  const ok = validate(body);
  expect(ok ? [] : validate.errors).toEqual([]);
}

describe('the simulator serves OpenAPI 3.1 and every endpoint answers by it', () => {
  it('uses only standard formats, and its id patterns check prefixes', async () => {
    expect(JSON.stringify(doc)).not.toContain('"format":"starts_with"');
    const key = s.keys[0]!.api_key;
    const teams = await call(s.url, '/v1/teams', { key });
    const project = [...s.sim.world.projects.values()].find((p) => p.teamId === teams.body.data[0].id)!;
    const renders = await call(s.url, `/v1/renders?project_id=${project.id}&limit=1`, { key });
    const schema = doc.paths['/v1/renders/{id}'].get.responses['200'].content['application/json'].schema;
    const validate = ajv.compile(schema);
    expect(validate(renders.body.data[0])).toBe(true);
    expect(validate({ ...renders.body.data[0], id: renders.body.data[0].id.replace(/^rend_/, 'proj_') })).toBe(false);
    expect(JSON.stringify(validate.errors)).toContain('pattern');
  });

  it('is an OpenAPI 3.1 document of version 1.0.0', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
  });

  it('validates successes and errors of every endpoint', async () => {
    const key = s.keys[0]!.api_key;
    const teams = await call(s.url, '/v1/teams', { key });
    conforms('/v1/teams', 'get', teams.status, teams.body);
    const team = teams.body.data[0].id;
    const t = await call(s.url, `/v1/teams/${team}`, { key });
    conforms('/v1/teams/{id}', 'get', t.status, t.body);
    const nt = await call(s.url, `/v1/teams/team_nope`, { key });
    conforms('/v1/teams/{id}', 'get', nt.status, nt.body);
    const me = await call(s.url, '/v1/me', { key });
    conforms('/v1/me', 'get', me.status, me.body);
    const unauth = await call(s.url, '/v1/me');
    conforms('/v1/me', 'get', unauth.status, unauth.body);
    const users = await call(s.url, `/v1/users?team_id=${team}`, { key });
    conforms('/v1/users', 'get', users.status, users.body);
    const u = await call(s.url, `/v1/users/${users.body.data[0].id}`, { key });
    conforms('/v1/users/{id}', 'get', u.status, u.body);
    const nu = await call(s.url, `/v1/users/user_nope`, { key });
    conforms('/v1/users/{id}', 'get', nu.status, nu.body);
    const projects = await call(s.url, `/v1/projects?team_id=${team}&limit=2`, { key });
    conforms('/v1/projects', 'get', projects.status, projects.body);
    const badCursor = await call(s.url, `/v1/projects?team_id=${team}&cursor=zzz`, { key });
    conforms('/v1/projects', 'get', badCursor.status, badCursor.body);
    const noTeam = await call(s.url, `/v1/projects`, { key });
    conforms('/v1/projects', 'get', noTeam.status, noTeam.body);
    const projectWithTpl = [...s.sim.world.projects.values()].find((p) => p.teamId === team && p.templates.length > 0)!;
    const p = await call(s.url, `/v1/projects/${projectWithTpl.id}`, { key });
    conforms('/v1/projects/{id}', 'get', p.status, p.body);
    const tpls = await call(s.url, `/v1/templates?project_id=${projectWithTpl.id}`, { key });
    conforms('/v1/templates', 'get', tpls.status, tpls.body);
    const tpl = await call(s.url, `/v1/templates/${tpls.body.data[0].id}?project_id=${projectWithTpl.id}`, { key });
    conforms('/v1/templates/{id}', 'get', tpl.status, tpl.body);
    const ntpl = await call(s.url, `/v1/templates/tpl_nope?project_id=${projectWithTpl.id}`, { key });
    conforms('/v1/templates/{id}', 'get', ntpl.status, ntpl.body);
    const renders = await call(s.url, `/v1/renders?project_id=${projectWithTpl.id}&limit=60`, { key });
    conforms('/v1/renders', 'get', renders.status, renders.body);
    const complete = renders.body.data.find((r: any) => r.status === 'complete');
    const r = await call(s.url, `/v1/renders/${complete.id}`, { key });
    conforms('/v1/renders/{id}', 'get', r.status, r.body);
    const created = await call(s.url, '/v1/renders', { method: 'POST', key, body: { name: 'oa', project_id: projectWithTpl.id } });
    conforms('/v1/renders', 'post', created.status, created.body);
    const invalid = await call(s.url, '/v1/renders', { method: 'POST', key, body: { project_id: projectWithTpl.id } });
    conforms('/v1/renders', 'post', invalid.status, invalid.body);
    const missing = await call(s.url, '/v1/renders', { method: 'POST', key, body: { name: 'x', project_id: 'proj_nope' } });
    conforms('/v1/renders', 'post', missing.status, missing.body);
    const badTpl = await call(s.url, '/v1/renders', { method: 'POST', key, body: { name: 'x', project_id: projectWithTpl.id, template_id: 'tpl_nope' } });
    conforms('/v1/renders', 'post', badTpl.status, badTpl.body);
  });
});
