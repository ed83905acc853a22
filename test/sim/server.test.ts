import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startSim, type RunningSim } from '../helpers/sim.js';

let s: RunningSim;
let key0: string; // person 0: admin of team 0, member of team 2, administers account 1
beforeAll(async () => {
  s = await startSim();
  key0 = s.keys[0]!.api_key;
});
afterAll(async () => s.sim.close());

const firstProject = async (key: string) => {
  const teams = await call(s.url, '/v1/teams', { key });
  const teamId = teams.body.data[0].id as string;
  const projects = await call(s.url, `/v1/projects?team_id=${teamId}`, { key });
  return projects.body.data[0].id as string;
};

describe('keys and reach', () => {
  it('answers 401 without a key and with an invalid key', async () => {
    expect((await call(s.url, '/v1/teams')).status).toBe(401);
    expect((await call(s.url, '/v1/teams', { key: 'sk_' + 'x'.repeat(32) })).status).toBe(401);
    expect((await call(s.url, '/v1/teams')).body).toEqual({ error: expect.any(String) });
  });

  it('keys are sk_ plus 32 characters, one per person', () => {
    for (const k of s.keys) expect(k.api_key).toMatch(/^sk_[A-Za-z0-9]{32}$/);
    expect(new Set(s.keys.map((k) => k.user_id)).size).toBe(s.keys.length);
  });

  it('reaches own teams plus every team of an administered account, with the role or null', async () => {
    const res = await call(s.url, '/v1/teams', { key: key0 });
    const byId = new Map(res.body.data.map((t: any) => [t.id, t.role]));
    const world = s.sim.world;
    const p0 = s.keys[0]!.user_id;
    for (const team of world.teams.values()) {
      const member = team.members.find((m) => m.userId === p0);
      const admin = world.accounts.get(team.accountId)!.admins.includes(p0);
      if (member) expect(byId.get(team.id)).toBe(member.role);
      else if (admin) expect(byId.get(team.id)).toBeNull();
      else expect(byId.has(team.id)).toBe(false);
    }
    expect([...byId.values()]).toContain(null); // a team reachable only through the account
  });

  it('answers 404 for an unreachable resource exactly like a missing one', async () => {
    const p4 = s.keys[4]!; // person 4 reaches fewer teams
    const reach = new Set(p4.teams.map((t) => t.id));
    const hidden = [...s.sim.world.projects.values()].find((p) => !reach.has(p.teamId))!;
    const a = await call(s.url, `/v1/projects/${hidden.id}`, { key: p4.api_key });
    const b = await call(s.url, `/v1/projects/proj_doesnotexist`, { key: p4.api_key });
    expect(a.status).toBe(404);
    expect(b.status).toBe(404);
    expect(Object.keys(a.body)).toEqual(Object.keys(b.body));
    const hiddenRender = [...s.sim.world.renders.values()].find((r) => !reach.has(r.teamId))!;
    expect((await call(s.url, `/v1/renders/${hiddenRender.id}`, { key: p4.api_key })).status).toBe(404);
  });

  it('revokes a key at runtime; the next request fails and other keys keep working', async () => {
    const victim = s.keys[5] ?? s.keys[4]!;
    expect((await call(s.url, '/v1/me', { key: victim.api_key })).status).toBe(200);
    expect((await call(s.url, '/_sim/keys/revoke', { method: 'POST', body: { api_key: victim.api_key } })).status).toBe(200);
    expect((await call(s.url, '/v1/me', { key: victim.api_key })).status).toBe(401);
    expect((await call(s.url, '/v1/me', { key: key0 })).status).toBe(200);
    const rotated = await call(s.url, '/_sim/keys/rotate', { method: 'POST', body: { user_id: victim.user_id } });
    expect((await call(s.url, '/v1/me', { key: rotated.body.api_key })).body.id).toBe(victim.user_id);
  });
});

describe('cursor pagination', () => {
  it('clamps limit above 60, rejects limit 0, defaults to 20', async () => {
    const project = await firstProject(key0);
    const big = await call(s.url, `/v1/renders?project_id=${project}&limit=500`, { key: key0 });
    expect(big.status).toBe(200);
    expect(big.body.data.length).toBeLessThanOrEqual(60);
    expect((await call(s.url, `/v1/renders?project_id=${project}&limit=0`, { key: key0 })).status).toBe(422);
    // without limit, 20 per page: a project with more than 20 renders answers at most 20 and a cursor
    const reach = new Set(s.keys[0]!.teams.map((t) => t.id));
    const full = [...s.sim.world.projects.values()].find((p) => reach.has(p.teamId) && s.sim.world.teams.get(p.teamId)!.credits > 30)!;
    expect(full).toBeDefined();
    for (let i = 0; i < 25; i++) expect((await call(s.url, '/v1/renders', { method: 'POST', key: key0, body: { name: `page ${i}`, project_id: full.id } })).status).toBe(201);
    const dflt = await call(s.url, `/v1/renders?project_id=${full.id}`, { key: key0 });
    expect(dflt.body.data.length).toBeLessThanOrEqual(20);
    expect(dflt.body.data.length).toBeGreaterThan(0);
    expect(dflt.body.next_cursor).toEqual(expect.any(String));
    const wide = await call(s.url, `/v1/renders?project_id=${full.id}&limit=60`, { key: key0 });
    expect(wide.body.data.length).toBeGreaterThan(20);
  });

  it('pages newest first through short pages to the end, with no duplicate and no gap while renders are created', async () => {
    const project = await firstProject(key0);
    const seen: string[] = [];
    let cursor: string | null = null;
    let shortWithMore = 0;
    let created = 0;
    do {
      const res: any = await call(s.url, `/v1/renders?project_id=${project}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: key0 });
      expect(res.status).toBe(200);
      if (res.body.data.length < 3 && res.body.next_cursor) shortWithMore++;
      seen.push(...res.body.data.map((r: any) => r.id));
      cursor = res.body.next_cursor;
      expect(res.body.has_more).toBe(cursor !== null);
      // a render created between pages must not disturb the walk
      await call(s.url, '/v1/renders', { method: 'POST', key: key0, body: { name: `between ${created++}`, project_id: project } });
      s.sim.clock.advance(1000);
    } while (cursor);
    const before = [...s.sim.world.renders.values()].filter((r) => r.projectId === project && !r.name.startsWith('between '));
    expect(new Set(seen).size).toBe(seen.length);
    expect(new Set(seen)).toEqual(new Set(before.map((r) => r.id)));
    expect(shortWithMore).toBeGreaterThan(0);
    const times = seen.map((id) => s.sim.world.renders.get(id)!.createdAt);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('orders oldest first with order=asc', async () => {
    const project = await firstProject(key0);
    const res = await call(s.url, `/v1/renders?project_id=${project}&order=asc&limit=60`, { key: key0 });
    const times = res.body.data.map((r: any) => r.created_at);
    expect([...times].sort((a: number, b: number) => a - b)).toEqual(times);
  });

  it('search filters by name and orders by relevance, ignoring order', async () => {
    const project = await firstProject(key0);
    const res = await call(s.url, `/v1/renders?project_id=${project}&search=render&limit=60&order=asc`, { key: key0 });
    expect(res.body.data.length).toBeGreaterThan(0);
    for (const r of res.body.data) expect(r.name.toLowerCase()).toContain('render');
    const exact = await call(s.url, `/v1/renders?project_id=${project}&search=between 0&limit=60`, { key: key0 });
    expect(exact.body.data[0].name).toBe('between 0');
  });

  it('status filter may give short or empty pages with more to follow', async () => {
    const project = await firstProject(key0);
    const all = [...s.sim.world.renders.values()].filter((r) => r.projectId === project && r.status === 'failed').map((r) => r.id);
    const got: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await call(s.url, `/v1/renders?project_id=${project}&status=failed&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: key0 });
      for (const r of res.body.data) expect(r.status).toBe('failed');
      got.push(...res.body.data.map((r: any) => r.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(new Set(got)).toEqual(new Set(all));
  });

  it('rejects cursor misuse with 400 in the v1 error shape', async () => {
    const project = await firstProject(key0);
    const page = await call(s.url, `/v1/renders?project_id=${project}&limit=2`, { key: key0 });
    const cursor = encodeURIComponent(page.body.next_cursor);
    const wrongFilter = await call(s.url, `/v1/renders?project_id=${project}&limit=2&order=asc&cursor=${cursor}`, { key: key0 });
    expect(wrongFilter.status).toBe(400);
    expect(wrongFilter.body).toEqual({ error: expect.stringMatching(/cursor/i) });
    const teams = await call(s.url, '/v1/teams', { key: key0 });
    const wrongEndpoint = await call(s.url, `/v1/projects?team_id=${teams.body.data[0].id}&cursor=${cursor}`, { key: key0 });
    expect(wrongEndpoint.status).toBe(400);
    const tampered = await call(s.url, `/v1/renders?project_id=${project}&limit=2&cursor=${cursor}x`, { key: key0 });
    expect(tampered.status).toBe(400);
    expect((await call(s.url, `/v1/renders?project_id=${project}&cursor=garbage`, { key: key0 })).status).toBe(400);
  });
});

describe('renders: creation, lifecycle, outputs, credits', () => {
  it('walks initializing → ready → queued → processing → finalizing → complete with signed outputs only at the end', async () => {
    const project = await firstProject(key0);
    const created = await call(s.url, '/v1/renders', { method: 'POST', key: key0, body: { name: 'lifecycle', project_id: project } });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('initializing');
    expect(created.body.output).toBeUndefined();
    expect(created.body.updated_at).toBeNull();
    const seen = [created.body.status];
    for (let i = 0; i < 20; i++) {
      s.sim.clock.advance(250);
      const r = await call(s.url, `/v1/renders/${created.body.id}`, { key: key0 });
      if (seen[seen.length - 1] !== r.body.status) seen.push(r.body.status);
      if (r.body.status !== 'complete') expect(r.body.output).toBeUndefined();
      else {
        expect(r.body.output.master).toMatch(/^https:\/\/.+\?expires=\d+&signature=[0-9a-f]+$/);
        expect(Object.keys(r.body.output).length).toBeGreaterThan(1);
      }
    }
    expect(seen).toEqual(['initializing', 'ready', 'queued', 'processing', 'finalizing', 'complete']);
  });

  it('ends in failed for a render that fails, with no output', async () => {
    const project = await firstProject(key0);
    const created = await call(s.url, '/v1/renders', { method: 'POST', key: key0, body: { name: 'boom [sim:fail]', project_id: project } });
    s.sim.clock.advance(10_000);
    const r = await call(s.url, `/v1/renders/${created.body.id}`, { key: key0 });
    expect(r.body.status).toBe('failed');
    expect(r.body.output).toBeUndefined();
  });

  it('applies template values to a copy: defaults for missing keys, unknown keys ignored, project unchanged', async () => {
    const project = [...s.sim.world.projects.values()].find((p) => p.templates.length > 0 && s.keys[0]!.teams.some((t) => t.id === p.teamId))!;
    const tpl = project.templates[0]!;
    const before = structuredClone(project.config);
    const [first, second] = tpl.fields;
    const res = await call(s.url, '/v1/renders', { method: 'POST', key: key0, body: { name: 'tpl', project_id: project.id, template_id: tpl.id, values: { [first!.key]: 'custom', nonsense: 1 } } });
    expect(res.status).toBe(201);
    const config = (await call(s.url, `/_sim/renders/${res.body.id}/config`)).body;
    expect(config[first!.key]).toBe('custom');
    expect(config[second!.key]).toEqual(second!.default_value);
    expect(config.nonsense).toBeUndefined();
    expect(project.config).toEqual(before);
  });

  it('rejects a template the project does not define, and invalid bodies with details', async () => {
    const project = await firstProject(key0);
    const other = [...s.sim.world.projects.values()].find((p) => p.id !== project && p.templates.length > 0)!;
    const wrongTpl = await call(s.url, '/v1/renders', { method: 'POST', key: key0, body: { name: 'x', project_id: project, template_id: other.templates[0]!.id } });
    expect(wrongTpl.status).toBe(400);
    expect(wrongTpl.body.error).toMatch(/not defined/);
    const invalid = await call(s.url, '/v1/renders', { method: 'POST', key: key0, body: { name: '', project_id: project, values: 'nope' } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.message).toBe('2 validation errors');
    expect(invalid.body.details).toEqual(expect.arrayContaining([
      expect.objectContaining({ field: 'name', code: 'too_small', message: expect.stringMatching(/^name/) }),
      expect.objectContaining({ field: 'values', code: 'invalid_type' }),
    ]));
    const long = await call(s.url, '/v1/renders', { method: 'POST', key: key0, body: { name: 'x'.repeat(251), project_id: project } });
    expect(long.status).toBe(422);
    expect(long.body.message).toMatch(/^name/);
  });

  it('answers 402 when the team has no credits', async () => {
    const team = [...s.sim.world.teams.values()].find((t) => t.credits === 0)!;
    const project = [...s.sim.world.projects.values()].find((p) => p.teamId === team.id)!;
    const key = s.keys.find((k) => k.teams.some((t) => t.id === team.id))!.api_key;
    const res = await call(s.url, '/v1/renders', { method: 'POST', key, body: { name: 'x', project_id: project.id } });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatch(/credits/);
  });
});

describe('seeded data', () => {
  it('holds the edge cases', () => {
    const w = s.sim.world;
    const renders = [...w.renders.values()];
    expect([...w.people.values()].some((p) => p.email === null)).toBe(true);
    expect([...w.projects.values()].some((p) => p.name.length === 250)).toBe(true);
    expect(renders.some((r) => /[^\x00-\x7f]/.test(r.name))).toBe(true);
    const secs = renders.map((r) => `${r.projectId}:${Math.floor(r.createdAt / 1000)}`);
    expect(new Set(secs).size).toBeLessThan(secs.length); // equal timestamps
    const multi = [...w.people.values()].filter((p) => [...w.teams.values()].filter((t) => t.members.some((m) => m.userId === p.id)).length > 1);
    expect(multi.some((p) => new Set([...w.teams.values()].flatMap((t) => t.members.filter((m) => m.userId === p.id).map((m) => m.role))).size > 1)).toBe(true);
  });

  it('is deterministic per seed', async () => {
    const { generateWorld, SCALES } = await import('../../src/sim/generator.js');
    const a = generateWorld(7, SCALES.tiny!, 1_000_000_000_000);
    const b = generateWorld(7, SCALES.tiny!, 1_000_000_000_000);
    const c = generateWorld(8, SCALES.tiny!, 1_000_000_000_000);
    expect(a).toEqual(b);
    const statuses = new Set(a.renders.map((r) => r.status));
    for (const st of ['initializing', 'ready', 'queued', 'processing', 'finalizing', 'complete', 'failed']) expect(statuses).toContain(st);
    expect(a.renders.map((r) => r.id)).not.toEqual(c.renders.map((r) => r.id));
  });
});

describe('admin routes', () => {
  it('answer loopback only', async () => {
    const far = await s.sim.app.inject({ method: 'GET', url: '/_sim/keys', remoteAddress: '10.1.2.3' });
    expect(far.statusCode).toBe(403);
    const near = await s.sim.app.inject({ method: 'GET', url: '/_sim/keys', remoteAddress: '127.0.0.1' });
    expect(near.statusCode).toBe(200);
    expect((await s.sim.app.inject({ method: 'POST', url: '/_sim/clock', remoteAddress: '192.168.1.9', payload: { advance_ms: 1 } })).statusCode).toBe(403);
  });

  it('counts requests per method and endpoint, and resets', async () => {
    await call(s.url, '/_sim/stats/reset', { method: 'POST' });
    await call(s.url, '/v1/teams', { key: key0 });
    await call(s.url, '/v1/teams', { key: key0 });
    await call(s.url, '/v1/renders/rend_x', { key: key0 });
    const st = await call(s.url, '/_sim/stats');
    expect(st.body.requests).toEqual({ 'GET /v1/teams': 2, 'GET /v1/renders/:id': 1 });
    expect(st.body.total).toBe(3);
  });
});
