import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIKE_EXTRA_STEPS } from '../../src/query/like.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * A LIKE value with wildcards is matched without a regular expression, at most a text's length times the pattern's a
 * title; over one request's titles that work is bounded (LIKE_EXTRA_STEPS): past it the question is a 400 naming the
 * pattern, never an event loop held. Here over HTTP, on a team whose renders carry v1's longest names (250 characters).
 */
let sim: RunningSim;
let gw: TestGateway;
let tok: string;
const LONG = 'a'.repeat(250);
const COUNT = 1_400;

beforeAll(async () => {
  sim = await startSim();
  const person = sim.keys[0]!;
  const world = sim.sim.world;
  const team = person.teams[0]!.id;
  world.setCredits(team, 1_000_000);
  const me = world.authenticate(`Bearer ${person.api_key}`);
  const project = [...world.projects.values()].find((p) => p.teamId === team)!;
  for (let i = 0; i < COUNT; i++) world.createRender(me, { name: LONG, project_id: project.id });
  gw = await startGateway({ ANSWER_CACHE_MB: '0' }, {}, { sim });
  await gw.addUser(0, 'like-cost@example.com');
  tok = await gw.login('like-cost@example.com');
  await gw.deps.replica!.syncNow([team]);
}, 120_000);
afterAll(async () => { await gw.close(); await sim.sim.close(); });

describe('a LIKE test costs at most its budget, over HTTP', () => {
  it('a wildcard value that goes back over every long title is a 400 naming it; an ordinary wildcard value answers', async () => {
    // each title: ~125 × 125 steps past one a character; over the team's titles, past the budget
    const value = `_${'a'.repeat(124)}b`;
    expect(COUNT * 125 * 124).toBeGreaterThan(LIKE_EXTRA_STEPS);
    for (const query of [`filter[title][_contains]=${value}&limit=1`, `filter[title][_contains]=${value}&meta=filter_count&limit=0`, `search=${value}&limit=1`]) {
      const r = await gw.get(`/renders?${query}`, tok);
      expect(r.status, query).toBe(400);
      expect(r.body.errors[0].extensions.code).toBe('INVALID_QUERY');
      expect(r.body.errors[0].message).toMatch(/^Invalid query. The pattern "%_a{58}…" is too costly to look for/);
    }
    // many terms, each within what one term may spend, together past it: one budget a request (attack pass 19, F1: a
    // term's own budget each, and 1 000 terms held the instance 68 s); with a wildcard (the LIKE test) and without
    // (the title column's bytes)
    const near = (k: number) => 'a'.repeat(k);
    for (const [kind, term] of [['like', (i: number) => `_${near(60 + i)}b`], ['plain', (i: number) => `${near(60 + i)}b`]] as const) {
      const or = Array.from({ length: 12 }, (_, i) => `filter[_or][${i}][title][_contains]=${term(i)}`).join('&');
      const many = await gw.get(`/renders?${or}&limit=1`, tok);
      expect(many.status, kind).toBe(400);
      expect(many.body.errors[0].message, kind).toMatch(/is too costly to look for/);
      const one = await gw.get(`/renders?filter[title][_contains]=${term(0)}&limit=1`, tok);
      expect(one.status, kind).toBe(200);
    }
    // terms that fail at once on every character cost one step a character: walked, they count too (attack pass 20, N1:
    // 1 000 of them held others 6.7 s) — 400 of them over these titles walk past TEXT_WALK_STEPS
    for (const value of [(i: number) => `b_${i}`, (i: number) => `bz${i}`]) {
      const cheap = Array.from({ length: 400 }, (_, i) => ({ title: { _contains: value(i) } }));
      const walked = await gw.app.inject({ method: 'SEARCH', url: '/renders', headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json' },
        payload: { query: { filter: { _or: cheap }, meta: 'filter_count', limit: 1 } } });
      expect(walked.statusCode, value(0)).toBe(400);
      expect(walked.json().errors[0].message).toMatch(/too costly/);
    }
    // the same titles, a wildcard value of ordinary size: every long title, counted
    const usual = await gw.get(`/renders?filter[title][_contains]=a_a&meta=filter_count&limit=1`, tok);
    expect(usual.status).toBe(200);
    expect(usual.body.meta.filter_count).toBe(COUNT);
    expect(usual.body.data[0].title).toBe(LONG);
  }, 60_000);

  it('the same refusal asked as a file (export=csv|xml|yaml|json, limit=-1): the 400 envelope, not a 500 under the file\'s type (attack pass 19, F5)', async () => {
    const value = `_${'a'.repeat(124)}b`;
    for (const format of ['csv', 'xml', 'yaml', 'json']) {
      const r = await gw.app.inject({ method: 'GET', url: `/renders?fields=id&filter[title][_contains]=${value}&export=${format}&limit=-1`,
        headers: { authorization: `Bearer ${tok}` } });
      expect(r.statusCode, format).toBe(400);
      expect(r.headers['content-type'], format).toMatch(/^application\/json/);
      expect(r.headers['content-disposition'], format).toBeUndefined();
      expect(r.json().errors[0], format).toMatchObject({ extensions: { code: 'INVALID_QUERY' }, message: expect.stringMatching(/too costly/) });
    }
  }, 60_000);
});
