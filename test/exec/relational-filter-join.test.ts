import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derivedUuid } from '../../src/translate/ids.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * A one-to-many filter (`filter[renders][…]` on projects, `filter[project][renders][…]` on renders) is a join in
 * Directus (an EXISTS over every related item, legacy-semantics.md §6): it sees every related item, not the first
 * QUERY_LIMIT_DEFAULT a nested list shows. Found while hardening the relational walks: with projects of 500 renders,
 * a filter naming the 500th render found no project. The reference is the simulator's world, read here directly.
 */
const NESTED = 3; // (the nested list's default, made small: the tiny world's projects hold 8 renders)

for (const mode of ['index', 'live'] as const) {
  describe(`a one-to-many filter sees every related item (${mode})`, () => {
    let gw: TestGateway;
    let token: string;
    beforeAll(async () => {
      gw = await startGateway({ QUERY_LIMIT_DEFAULT: String(NESTED), CACHE_TTL_METADATA_MS: '0', INDEX_ENABLED: String(mode === 'index') });
      await gw.addUser(0, 'ann@example.com');
      token = await gw.login('ann@example.com');
      if (mode === 'index') await gw.deps.replica!.syncNow(gw.s.keys[0]!.teams.map((t) => t.id));
      // (live, a project is read by id once a list has named it)
      expect((await gw.get('/projects?limit=-1&fields=id', token)).status).toBe(200);
    }, 60_000);
    afterAll(async () => gw.close());

    /** Every render of the user's teams, by project (uuids as the gateway names them), in primary-key order. */
    const world = () => {
      const reach = new Set(gw.s.keys[0]!.teams.map((t) => t.id));
      const byProject = new Map<string, { id: string; title: string }[]>();
      for (const r of gw.s.sim.world.renders.values()) {
        if (!reach.has(r.teamId)) continue;
        const p = derivedUuid('project', r.projectId);
        byProject.set(p, [...(byProject.get(p) ?? []), { id: derivedUuid('render', r.id), title: r.name }]);
      }
      for (const list of byProject.values()) list.sort((a, b) => (a.id < b.id ? -1 : 1));
      return byProject;
    };

    it('finds the project of a render past the nested list\'s limit, and the renders reaching it', async () => {
      const byProject = world();
      const [project, renders] = [...byProject.entries()].find(([, list]) => list.length > NESTED)!;
      const last = renders[renders.length - 1]!;
      // the nested list shows the first NESTED renders (so the last one is not among them)
      const shown = (await gw.get(`/projects/${project}?fields=renders`, token)).body.data.renders as string[];
      expect(shown).toEqual(renders.slice(0, NESTED).map((r) => r.id));
      const projects = await gw.get(`/projects?fields=id&filter[renders][id][_eq]=${last.id}`, token);
      expect(projects.status).toBe(200);
      expect(projects.body.data).toEqual([{ id: project }]);
      if (mode === 'index') expect(projects.headers['x-gateway-source']).toBe('index');
      // _none: every other project of the user's teams
      const none = await gw.get(`/projects?fields=id&sort=id&limit=-1&filter[renders][_none][id][_eq]=${last.id}`, token);
      expect(none.body.data.map((p: { id: string }) => p.id)).toEqual([...byProject.keys()].filter((p) => p !== project).sort());
      // through a many-to-one hop: every render of that project
      const siblings = await gw.get(`/renders?fields=id&sort=id&limit=-1&filter[project][renders][title][_eq]=${encodeURIComponent(last.title)}`, token);
      const holders = [...byProject.entries()].filter(([, list]) => list.some((r) => r.title === last.title)).map(([p]) => p);
      const expected = holders.flatMap((p) => byProject.get(p)!.map((r) => r.id)).sort();
      expect(siblings.body.data.map((r: { id: string }) => r.id)).toEqual(expected);
      expect(expected.length).toBeGreaterThan(0);
    });
  });
}
