import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../helpers/databases.js';
import {
  asXmlText, expectedCsv, parseCsv, parseXmlItems, parseYamlItems, unsigned, unsignedValue,
} from '../helpers/exits.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Every exit of a list read carries the same items in the same order, content compared, never counted: the plain JSON
 * answer; the streamed answer (`limit=-1`) sliced at the query's offset and limit; the pages of 100 walked in turn; each
 * export format read back by a reader of its own (csv, json, xml, yaml); SEARCH with the same question; and a second ask
 * (an answer-cache hit on the replica). On the replica and on the live source, over SQLite and PostgreSQL.
 */

type Item = Record<string, unknown>;
interface Question {
  fields: string[];
  filter?: Record<string, unknown>;
  sort?: string[];
  limit?: number;
  page?: number;
  offset?: number;
  meta?: string;
}

const FIELDS = ['id', 'title', 'status', 'date_created', 'download_ready', 'data', 'output', 'project.title', 'project.id', 'project.account.name', 'creator'];

const filterOf = (dates: string[]) => fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('complete', 'failed', 'processing', 'draft').map((s) => ({ status: { _eq: s } })),
  fc.subarray(['complete', 'failed', 'ready', 'encoding'], { minLength: 2 }).map((s) => ({ status: { _in: s } })),
  fc.constantFrom('render', 'Holiday', '1', 'é').map((s) => ({ title: { _contains: s } })),
  fc.constantFrom(...dates).map((d) => ({ date_created: { _gt: d } })),
  fc.constantFrom(...dates).map((d) => ({ _or: [{ date_created: { _lte: d } }, { status: { _eq: 'failed' } }] })),
  fc.constant({ project: { title: { _nnull: true } } }),
);

const questionOf = (dates: string[]) => fc.record({
  fields: fc.oneof(fc.subarray(FIELDS, { minLength: 1 }), fc.constant<string[]>(['*']), fc.constant<string[]>(['*', 'project.title'])),
  filter: filterOf(dates),
  sort: fc.constantFrom<string[] | undefined>(undefined, ['-date_created'], ['date_created'], ['title'], ['-title', 'id'], ['id'], ['status', '-date_created'], ['-id']),
  limit: fc.constantFrom(undefined, 1, 7, 25, 100, -1),
  skip: fc.constantFrom<'none' | 'page' | 'offset'>('none', 'page', 'offset'),
  meta: fc.constantFrom(undefined, 'filter_count', 'total_count', '*'),
}).map(({ skip, ...q }): Question => {
  const out: Question = { fields: q.fields };
  if (q.filter) out.filter = q.filter;
  if (q.sort) out.sort = q.sort;
  if (q.limit !== undefined) out.limit = q.limit;
  if (q.meta) out.meta = q.meta;
  if (skip === 'page' && q.limit !== -1) out.page = 2;
  if (skip === 'offset') out.offset = 3;
  return out;
});

function queryString(q: Question, extra: Record<string, string | number> = {}): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries({ ...q, ...extra })) {
    if (v === undefined) continue;
    const text = Array.isArray(v) ? v.join(',') : typeof v === 'object' ? JSON.stringify(v) : String(v);
    parts.push(`${k}=${encodeURIComponent(text)}`);
  }
  return parts.join('&');
}

interface Setup { name: string; env: Record<string, string>; source: 'index' | 'live' }
const setups = (await databases()).flatMap((db): Setup[] => [
  { name: `replica, ${db.name}`, env: { DATABASE_URL: db.url }, source: 'index' as const },
  // the live gateway gets a store of its own (created in beforeAll on PostgreSQL)
  { name: `live, ${db.name}`, env: { DATABASE_URL: db.name === 'sqlite' ? `${db.url}-live` : `${db.url}_live`, INDEX_ENABLED: 'false' }, source: 'live' as const },
]);

for (const setup of setups) {
  describe(`every exit carries the JSON answer's items (${setup.name})`, () => {
    let gw: TestGateway;
    let token: string;
    let dates: string[];
    beforeAll(async () => {
      const env = setup.env;
      if (env.DATABASE_URL!.startsWith('postgres') && setup.source === 'live') await createDatabase(env.DATABASE_URL!);
      gw = await startGateway(env, { scale: 'small' });
      await gw.addUser(0, 'exits@example.com');
      token = await gw.login('exits@example.com');
      if (setup.source === 'index') await gw.deps.replica!.syncNow(gw.s.keys[0]!.teams.map((t) => t.id));
      const all = (await gw.get('/renders?limit=-1&fields=date_created&sort=date_created', token)).body.data as Item[];
      expect(all.length).toBeGreaterThan(200); // pages of 100 are walked over several pages
      dates = [0.1, 0.3, 0.5, 0.7, 0.9].map((f) => all[Math.floor(all.length * f)]!.date_created as string);
    });
    afterAll(async () => gw?.close());

    const ask = async (method: 'GET' | 'SEARCH', url: string, payload?: unknown) => {
      const res = await gw.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
      return res;
    };
    const json = async (url: string) => {
      const res = await ask('GET', url);
      expect(res.statusCode, `${url}: ${res.body.slice(0, 300)}`).toBe(200);
      expect(res.headers['x-gateway-source'], url).toBe(setup.source);
      return JSON.parse(res.body) as { data: Item[]; meta?: Record<string, number> };
    };

    it('plain, streamed, paged, exported in four formats, searched and cached: the same items in the same order', async () => {
      await fc.assert(fc.asyncProperty(questionOf(dates), async (q) => {
        const plain = await json(`/renders?${queryString(q)}`);
        const data = unsignedValue(plain.data);

        // the whole answer, streamed, and the pages of 100 walked in turn: the same sequence
        const whole = { ...q, limit: -1 };
        delete whole.page;
        delete whole.offset;
        const streamed = unsignedValue((await json(`/renders?${queryString(whole)}`)).data);
        const walked: Item[] = [];
        for (let page = 1; ; page++) {
          const p = unsignedValue((await json(`/renders?${queryString({ ...whole, limit: 100, page })}`)).data);
          walked.push(...p);
          if (p.length < 100) break;
        }
        expect(walked, 'the pages of 100 walked in turn = the streamed answer').toEqual(streamed);
        const limit = q.limit ?? 100;
        const skip = q.offset ?? (q.page && limit > 0 ? (q.page - 1) * limit : 0);
        expect(data, 'the answer = the streamed answer at its offset and limit').toEqual(streamed.slice(skip, limit === -1 ? undefined : skip + limit));

        // meta: the counts are those of the items
        if (q.meta === 'filter_count' || q.meta === '*') expect(plain.meta?.filter_count).toBe(streamed.length);

        // each export format, read back by a reader of its own
        for (const format of ['json', 'csv', 'xml', 'yaml'] as const) {
          const res = await ask('GET', `/renders?${queryString(q, { export: format })}`);
          expect(res.statusCode, format).toBe(200);
          expect(res.headers['content-disposition'], format).toMatch(new RegExp(`^attachment; filename="renders \\d{8}-\\d{1,6}\\.${format}"$`));
          const body = unsigned(res.body);
          if (format === 'json') {
            expect(JSON.parse(body), 'json export').toEqual(data);
            expect(body, 'json export bytes').toBe(JSON.stringify(data, null, '\t'));
          } else if (format === 'csv') {
            expect(parseCsv(body), 'csv export').toEqual(expectedCsv(data, true));
          } else if (format === 'xml') {
            expect(unsignedValue(parseXmlItems(res.body)), 'xml export').toEqual(data.map(asXmlText));
          } else {
            expect(parseYamlItems(body), 'yaml export').toEqual(data);
          }
        }

        // SEARCH with the same question, and the same GET again (a cache hit on the replica)
        const searched = await ask('SEARCH', '/renders', { query: q });
        expect(searched.statusCode).toBe(200);
        expect(unsignedValue(JSON.parse(searched.body))).toEqual(unsignedValue(plain));
        const again = await ask('GET', `/renders?${queryString(q)}`);
        if (setup.source === 'index' && q.limit !== -1) expect(again.headers['x-gateway-answer-cache']).toBe('hit');
        expect(unsignedValue(JSON.parse(again.body))).toEqual(unsignedValue(plain));
      }), { numRuns: 12, seed: 4242, endOnFailure: true });
    }, 300_000);

    it('full exports of relational fields on /renders and /items/renders, newest first: items, not bytes', async () => {
      const reference = unsignedValue((await json('/renders?limit=-1&fields=id,title,status,project.title&sort=-date_created')).data);
      expect(reference.length).toBeGreaterThan(200);
      for (const prefix of ['', '/items']) {
        for (const sort of ['', '&sort=-date_created']) {
          const csv = await ask('GET', `${prefix}/renders?export=csv&limit=-1&fields=id,title,status,project.title${sort}`);
          expect(parseCsv(unsigned(csv.body))).toEqual(expectedCsv(reference, true));
          const js = await ask('GET', `${prefix}/renders?export=json&limit=-1&fields=id,title,status,project.title${sort}`);
          expect(JSON.parse(js.body)).toEqual(reference);
        }
      }
    });
  });
}

async function createDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = u.pathname.slice(1);
  u.pathname = '/postgres';
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: u.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
}
