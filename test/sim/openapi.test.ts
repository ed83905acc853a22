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

/**
 * Checks an answer against the documented operation `method path`: it has the status the request must produce
 * (`expected`, which the operation documents) and its body validates against that status's response schema.
 */
const checked = new Set<string>();
function conforms(pathTemplate: string, method: string, expected: number, answer: { status: number; body: unknown }): void {
  checked.add(`${method} ${pathTemplate} ${expected}`);
  const op = doc.paths[pathTemplate]?.[method];
  expect(op, `${method} ${pathTemplate} documented`).toBeDefined();
  const resp = op.responses[String(expected)];
  expect(resp, `${method} ${pathTemplate} documents ${expected}`).toBeDefined();
  expect(answer.status, `${method} ${pathTemplate} answers ${expected}: ${JSON.stringify(answer.body)}`).toBe(expected);
  const schema = resp.content['application/json'].schema;
  const validate = ajv.compile(schema);
  const ok = validate(answer.body);
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
    conforms('/v1/teams', 'get', 200, teams);
    const team = teams.body.data[0].id;
    const t = await call(s.url, `/v1/teams/${team}`, { key });
    conforms('/v1/teams/{id}', 'get', 200, t);
    const nt = await call(s.url, `/v1/teams/team_nope`, { key });
    conforms('/v1/teams/{id}', 'get', 404, nt);
    const me = await call(s.url, '/v1/me', { key });
    conforms('/v1/me', 'get', 200, me);
    const unauth = await call(s.url, '/v1/me');
    conforms('/v1/me', 'get', 401, unauth);
    const users = await call(s.url, `/v1/users?team_id=${team}`, { key });
    conforms('/v1/users', 'get', 200, users);
    const u = await call(s.url, `/v1/users/${users.body.data[0].id}`, { key });
    conforms('/v1/users/{id}', 'get', 200, u);
    const nu = await call(s.url, `/v1/users/user_nope`, { key });
    conforms('/v1/users/{id}', 'get', 404, nu);
    const projects = await call(s.url, `/v1/projects?team_id=${team}&limit=2`, { key });
    conforms('/v1/projects', 'get', 200, projects);
    const badCursor = await call(s.url, `/v1/projects?team_id=${team}&cursor=zzz`, { key });
    conforms('/v1/projects', 'get', 400, badCursor);
    const noTeam = await call(s.url, `/v1/projects`, { key });
    conforms('/v1/projects', 'get', 422, noTeam);
    const projectWithTpl = [...s.sim.world.projects.values()].find((p) => p.teamId === team && p.templates.length > 0)!;
    const p = await call(s.url, `/v1/projects/${projectWithTpl.id}`, { key });
    conforms('/v1/projects/{id}', 'get', 200, p);
    const tpls = await call(s.url, `/v1/templates?project_id=${projectWithTpl.id}`, { key });
    conforms('/v1/templates', 'get', 200, tpls);
    const tpl = await call(s.url, `/v1/templates/${tpls.body.data[0].id}?project_id=${projectWithTpl.id}`, { key });
    conforms('/v1/templates/{id}', 'get', 200, tpl);
    const ntpl = await call(s.url, `/v1/templates/tpl_nope?project_id=${projectWithTpl.id}`, { key });
    conforms('/v1/templates/{id}', 'get', 404, ntpl);
    const renders = await call(s.url, `/v1/renders?project_id=${projectWithTpl.id}&limit=60`, { key });
    conforms('/v1/renders', 'get', 200, renders);
    const complete = renders.body.data.find((r: any) => r.status === 'complete');
    const r = await call(s.url, `/v1/renders/${complete.id}`, { key });
    conforms('/v1/renders/{id}', 'get', 200, r);
    const created = await call(s.url, '/v1/renders', { method: 'POST', key, body: { name: 'oa', project_id: projectWithTpl.id } });
    conforms('/v1/renders', 'post', 201, created);
    const invalid = await call(s.url, '/v1/renders', { method: 'POST', key, body: { project_id: projectWithTpl.id } });
    conforms('/v1/renders', 'post', 422, invalid);
    const missing = await call(s.url, '/v1/renders', { method: 'POST', key, body: { name: 'x', project_id: 'proj_nope' } });
    conforms('/v1/renders', 'post', 404, missing);
    const badTpl = await call(s.url, '/v1/renders', { method: 'POST', key, body: { name: 'x', project_id: projectWithTpl.id, template_id: 'tpl_nope' } });
    conforms('/v1/renders', 'post', 400, badTpl);
    // the remaining documented errors of each operation
    conforms('/v1/renders', 'get', 422, await call(s.url, '/v1/renders', { key }));
    conforms('/v1/renders', 'get', 404, await call(s.url, '/v1/renders?project_id=proj_nope', { key }));
    conforms('/v1/renders', 'get', 400, await call(s.url, `/v1/renders?project_id=${projectWithTpl.id}&cursor=zzz`, { key }));
    conforms('/v1/renders', 'get', 401, await call(s.url, `/v1/renders?project_id=${projectWithTpl.id}`, { key: 'not-a-key' }));
    conforms('/v1/renders/{id}', 'get', 404, await call(s.url, '/v1/renders/rend_nope', { key }));
    conforms('/v1/projects', 'get', 404, await call(s.url, '/v1/projects?team_id=team_nope', { key }));
    conforms('/v1/projects/{id}', 'get', 404, await call(s.url, '/v1/projects/proj_nope', { key }));
    conforms('/v1/templates', 'get', 422, await call(s.url, '/v1/templates', { key }));
    conforms('/v1/templates', 'get', 404, await call(s.url, '/v1/templates?project_id=proj_nope', { key }));
    conforms('/v1/users', 'get', 422, await call(s.url, '/v1/users', { key }));
    conforms('/v1/users', 'get', 404, await call(s.url, '/v1/users?team_id=team_nope', { key }));
    conforms('/v1/teams', 'get', 401, await call(s.url, '/v1/teams'));
    for (const [path, tpl] of [['/v1/teams/team_nope', '/v1/teams/{id}'], ['/v1/users/user_nope', '/v1/users/{id}'], ['/v1/projects', '/v1/projects'],
      ['/v1/projects/proj_nope', '/v1/projects/{id}'], ['/v1/templates', '/v1/templates'], ['/v1/templates/tpl_nope', '/v1/templates/{id}'],
      ['/v1/renders/rend_nope', '/v1/renders/{id}'], ['/v1/users', '/v1/users']] as const)
      conforms(tpl, 'get', 401, await call(s.url, path));
    conforms('/v1/renders', 'post', 401, await call(s.url, '/v1/renders', { method: 'POST', body: { name: 'x', project_id: projectWithTpl.id } }));
    s.sim.world.setCredits(projectWithTpl.teamId, 0);
    conforms('/v1/renders', 'post', 402, await call(s.url, '/v1/renders', { method: 'POST', key, body: { name: 'x', project_id: projectWithTpl.id } }));
    // every status the document promises, but a fault (500), has been produced and checked
    const documented = Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) =>
      Object.entries(ops).flatMap(([method, op]: [string, any]) => Object.keys(op.responses).filter((st) => st !== '500').map((st) => `${method} ${path} ${st}`)));
    expect(documented.length).toBeGreaterThan(30);
    expect(documented.filter((d) => !checked.has(d))).toEqual([]);
  });
});
