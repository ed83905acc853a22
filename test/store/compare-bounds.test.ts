import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Comparator } from '../../src/compare/service.js';
import { loadMappings } from '../../src/config/mappings.js';
import { CompareStore } from '../../src/store/compare.js';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import type { IdTranslator } from '../../src/translate/ids.js';
import { databases } from '../helpers/databases.js';

/**
 * Comparison records are bounded whatever the answers: aliases multiply a difference's paths (one field read under 120
 * names), so the paths kept per answer and per route, and the samples' bytes, have bounds; the request line is kept
 * once per answer's samples, scrubbed of credentials.
 */
const m = loadMappings('mappings');
const stores = await databases();
const noIds = { resolveMany: async () => new Map<string, string>() } as unknown as IdTranslator;
const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpZCI6InVzZXIifQ.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWc';

/** One answer whose every alias of the title differs (the translated side kept the gateway's new title). */
function answers(aliases: readonly string[]) {
  const item = (title: string) => Object.fromEntries(aliases.map((a) => [a, title]));
  return {
    legacy: { status: 200, body: { data: [item('old title'), item('old title')] }, ms: 1 },
    translated: { status: 200, body: { data: [item('new title'), item('new title')] }, ms: 1 },
  };
}

describe.each(stores)('comparison records, bounded ($name)', ({ url }) => {
  let db: Db;
  beforeAll(async () => {
    db = await openDb(url);
    await migrate(db.kysely);
  });
  afterAll(async () => db.close());

  it('one answer aliasing a field 120 times keeps a bounded number of paths and samples, the request line once, scrubbed', async () => {
    const store = new CompareStore(db.kysely);
    await store.clear();
    const c = new Comparator(noIds, store, m.comparison);
    const aliases = Array.from({ length: 120 }, (_, i) => `t${i}`);
    const request = `GET /renders?${aliases.map((a) => `alias[${a}]=title`).join('&')}&fields=${aliases.join(',')}&access_token=SECRET-QS-1 ` +
      `{"note":"${'n'.repeat(50_000)}","token":"${JWT}"}`;
    const { legacy, translated } = answers(aliases);
    const diffs = await c.compare('GET /renders', request, false, legacy, translated);
    expect(diffs.length).toBeGreaterThanOrEqual(120);
    const fields = await db.kysely.selectFrom('compare_fields').selectAll().execute();
    expect(fields.length).toBeLessThanOrEqual(17);
    expect(CompareStore.PATHS_PER_ANSWER).toBe(16);
    expect(fields.find((f) => f.path === CompareStore.MORE_PATHS)?.count).toBe(1);
    const samples = await db.kysely.selectFrom('compare_samples').selectAll().execute();
    expect(samples.length).toBeLessThanOrEqual(16);
    const stored = JSON.stringify(samples) + JSON.stringify(await db.kysely.selectFrom('compare_requests').selectAll().execute());
    expect(stored.length).toBeLessThan(64 * 1024);
    // the request line once for the answer's samples, scrubbed and cut
    const requests = await db.kysely.selectFrom('compare_requests').selectAll().execute();
    expect(requests.length).toBe(1);
    expect(requests[0]!.request.length).toBeLessThanOrEqual(CompareStore.REQUEST_CHARS + 40);
    for (const secret of ['SECRET-QS-1', JWT]) expect(stored).not.toContain(secret);
    // the report gives each sample its request line
    const report = await store.report();
    const route = report.routes.find((r) => r.route === 'GET /renders')!;
    expect(route.total).toBe(1);
    expect(route.fields.flatMap((f) => f.samples).every((s) => s.request === requests[0]!.request)).toBe(true);
  });

  it('answers with ever new aliases keep at most the route bound of paths; the rest count together', async () => {
    const store = new CompareStore(db.kysely, Date.now, { pathsPerRoute: 40 });
    await store.clear();
    const c = new Comparator(noIds, store, m.comparison);
    for (let n = 0; n < 6; n++) {
      const aliases = Array.from({ length: 120 }, (_, i) => `a${n}x${i}`);
      const { legacy, translated } = answers(aliases);
      await c.compare('GET /renders', `GET /renders?n=${n}`, false, legacy, translated);
    }
    const fields = await db.kysely.selectFrom('compare_fields').selectAll().where('route', '=', 'GET /renders').execute();
    expect(fields.length).toBeLessThanOrEqual(41);
    expect(fields.find((f) => f.path === CompareStore.MORE_PATHS)?.count).toBe(6);
    expect(Number((await db.kysely.selectFrom('compare_samples').select((eb) => eb.fn.countAll().as('n')).executeTakeFirst())?.n))
      .toBeLessThanOrEqual(40 * 5);
    // samples a route: at most its bound, whatever its paths
    const few = new CompareStore(db.kysely, Date.now, { samplesPerRoute: 7 });
    for (let n = 0; n < 3; n++) {
      const { legacy, translated } = answers(Array.from({ length: 10 }, (_, i) => `s${n}x${i}`));
      await new Comparator(noIds, few, m.comparison).compare('GET /accounts', `GET /accounts?n=${n}`, false, legacy, translated);
    }
    expect((await db.kysely.selectFrom('compare_samples').select('id').where('route', '=', 'GET /accounts').execute()).length).toBe(7);
    // a path longer than the column is cut, never refused by the store
    const long = `x${'y'.repeat(2000)}`;
    const { legacy, translated } = answers([long]);
    await new Comparator(noIds, new CompareStore(db.kysely), m.comparison).compare('GET /projects', 'GET /projects', false, legacy, translated);
    const cut = await db.kysely.selectFrom('compare_fields').select('path').where('route', '=', 'GET /projects').execute();
    expect(cut.map((f) => f.path)).toEqual([expect.stringMatching(/^data\[\]\.xy+…\[cut: \d+ characters\]$/)]);
  });

  it('a field read under ever new aliases is recorded under the field it copies: later differences keep their own paths', async () => {
    // (attack pass 37, L-1: 300 requests naming one differing field anew each took every path of the route)
    const store = new CompareStore(db.kysely, Date.now, { pathsPerRoute: 40 });
    await store.clear();
    const c = new Comparator(noIds, store, m.comparison);
    for (let n = 0; n < 300; n++) {
      const { legacy, translated } = answers([`n${n}`]);
      await c.compare('GET /renders', `GET /renders?alias[n${n}]=title&fields=n${n}`, false, legacy, translated, undefined, { alias: { [`n${n}`]: 'title' } });
    }
    // the alias as the query string's JSON text names the field too
    const { legacy, translated } = answers(['j']);
    await c.compare('GET /renders', 'GET /renders?alias={"j":"title"}', false, legacy, translated, undefined, { alias: '{"j":"title"}' });
    // a genuine difference afterwards is counted under its own path, not "(more paths)"
    const later = answers(['status']);
    await c.compare('GET /renders', 'GET /renders?fields=status', false, later.legacy, later.translated);
    const fields = await db.kysely.selectFrom('compare_fields').selectAll().where('route', '=', 'GET /renders').execute();
    expect(fields.map((f) => [f.path, f.count]).sort()).toEqual([['data[].status', 1], ['data[].title (alias)', 301]]);
    // a secret field read under an innocent alias is redacted by the field's name
    const secret = { legacy: { status: 200, body: { data: [{ x: 'plain-secret-1' }] }, ms: 1 }, translated: { status: 200, body: { data: [{ x: 'plain-secret-2' }] }, ms: 1 } };
    await c.compare('GET /users', 'GET /users?alias[x]=password', false, secret.legacy, secret.translated, undefined, { alias: { x: 'password' } });
    const samples = JSON.stringify(await db.kysely.selectFrom('compare_samples').selectAll().where('route', '=', 'GET /users').execute());
    expect(samples).toContain('password (alias)');
    expect(samples).not.toMatch(/plain-secret/);
    // and inside whole items kept as values (unordered lists: an item missing on one side, extra on the other)
    const items = { legacy: { status: 200, body: { data: [{ id: 'a', x: 'plain-secret-3' }] }, ms: 1 },
      translated: { status: 200, body: { data: [{ id: 'b', x: 'plain-secret-4' }] }, ms: 1 } };
    await c.compare('GET /accounts', 'GET /accounts?alias[x]=password', true, items.legacy, items.translated, undefined, { alias: { x: 'password' } });
    const whole = JSON.stringify(await db.kysely.selectFrom('compare_samples').selectAll().where('route', '=', 'GET /accounts').execute());
    expect(whole).toContain('"id\\":\\"a');
    expect(whole).not.toMatch(/plain-secret/);
  });
});
