import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * `?export=json|csv` answers what a real Directus 10.10 answered for the same query over the same data
 * (test/fixtures/directus/answers.json, captured by `npm run capture:directus`): the same bytes, content type and
 * attachment name (its time aside); signed URLs compared without their signatures (they are minted per read).
 */
interface Answer { path: string; status: number; contentType: string; disposition: string | null; body: string }
const fixtures = JSON.parse(readFileSync('test/fixtures/directus/answers.json', 'utf8')) as { answers: Record<string, Answer> };
const unsigned = (s: string) => s.replace(/expires=\d+&signature=[0-9a-f]+/g, 'expires=…&signature=…');
const dispositionOf = (d: string | null) => d?.replace(/ \d{8}-\d{1,6}\./, ' <date>.');

let gw: TestGateway;
let token: string;
beforeAll(async () => {
  gw = await startGateway({}, { scale: 'tiny' });
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
  await gw.deps.index!.syncNow(gw.s.keys[0]!.teams.map((t) => t.id));
});
afterAll(async () => gw.close());

describe('export, as Directus 10 answers it', () => {
  for (const name of ['export json', 'export csv', 'export csv output', 'export csv projects with renders', 'export csv empty', 'export json empty', 'export json one']) {
    it(name, async () => {
      const expected = fixtures.answers[name]!;
      for (const prefix of ['', '/items']) {
        const res = await gw.app.inject({ method: 'GET', url: `${prefix}${expected.path}`, headers: { authorization: `Bearer ${token}` } });
        expect(res.statusCode).toBe(expected.status);
        expect(res.headers['content-type']).toBe(expected.contentType);
        expect(dispositionOf(res.headers['content-disposition'] as string)).toBe(dispositionOf(expected.disposition));
        expect(unsigned(res.body)).toBe(unsigned(expected.body));
      }
    });
  }

  it('a bad format is Directus\'s 400; xml and yaml are refused with a clear 400 (not served here)', async () => {
    const bad = await gw.get(fixtures.answers['export bad']!.path, token);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(JSON.parse(fixtures.answers['export bad']!.body));
    const xml = await gw.get('/renders?export=xml', token);
    expect(xml.status).toBe(400);
    expect(xml.body.errors[0].extensions.code).toBe('INVALID_QUERY');
    expect(xml.body.errors[0].message).toMatch(/use json or csv/);
  });

  it('one item exports as the object; limit=-1 exports every item (streamed JSON)', async () => {
    const list = await gw.get('/renders?limit=-1&fields=id&sort=id', token);
    const one = await gw.app.inject({ method: 'GET', url: `/renders/${list.body.data[0].id}?export=json&fields=id`, headers: { authorization: `Bearer ${token}` } });
    expect(one.body).toBe(JSON.stringify({ id: list.body.data[0].id }, null, '\t'));
    const all = await gw.app.inject({ method: 'GET', url: '/renders?limit=-1&fields=id&sort=id&export=json', headers: { authorization: `Bearer ${token}` } });
    expect(JSON.parse(all.body)).toEqual(list.body.data);
    expect(all.body).toBe(JSON.stringify(list.body.data, null, '\t'));
    const csv = await gw.app.inject({ method: 'GET', url: '/renders?limit=-1&fields=id,title&export=csv', headers: { authorization: `Bearer ${token}` } });
    expect(csv.body.split('\n')).toHaveLength(list.body.data.length + 1);
  });
});
