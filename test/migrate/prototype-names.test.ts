import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { equivalentOfShape } from '../../src/migrate/instantiate.js';
import { valuesFrom } from '../../src/migrate/prove.js';
import { ShapeRecorder } from '../../src/migrate/recorder.js';
import { reportHtml, reportMarkdown } from '../../src/migrate/render.js';
import { migrationReport } from '../../src/migrate/report.js';
import { renderSnippets } from '../../src/migrate/snippets.js';
import { parseQueryString } from '../../src/query/querystring.js';
import { ClientShapeStore } from '../../src/store/client-shapes.js';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { databases } from '../helpers/databases.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';
import { prototypeQueries } from '../helpers/prototype-keys.js';

/**
 * Names a client sends (fields, filter paths, sort keys, body keys) meet the mappings' tables in the equivalent, the
 * proof and the report: a name an object inherits (`constructor`, `__proto__`, `toString` …) is no field, anywhere.
 */
const m = loadMappings('mappings');
const NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'isPrototypeOf'];
const ROUTES = ['/renders', '/projects', '/accounts/:id', '/templates', '/users/me', '/render/:id'];
const stores = await databases();

describe.each(stores)('prototype names in recorded shapes ($name)', ({ url }) => {
  let db: Db;
  beforeAll(async () => {
    db = await openDb(url);
    await migrate(db.kysely);
  });
  afterAll(async () => db.close());

  it('every shape of them has an equivalent and snippets, and the report (JSON, Markdown, HTML) is made', async () => {
    await db.kysely.deleteFrom('client_shapes').execute();
    const store = new ClientShapeStore(db.kysely);
    const r = new ShapeRecorder(store, { schemas: m.schemas, limitDefault: 100, perClient: 100_000, retentionMs: 86_400_000, flushEveryMs: 0 });
    let n = 0;
    for (const name of NAMES) {
      const questions = [...prototypeQueries(name), `fields=${name}`, `fields=project.${name}`, `fields=project.${name}.x`, `sort=${name}`,
        `sort=-project.${name}`, `groupBy=${name}&aggregate[count]=*`, `aggregate[count]=${name}`, `filter[${name}][_eq]=1`, `filter[project][${name}][_eq]=1`,
        `deep[${name}][_limit]=1`, `meta=${name}`, `fields=*.${name}`, `fields=${name}.*`, `alias[${name}]=title&fields=${name}`];
      for (const route of ROUTES) {
        for (const question of questions) {
          r.note({ client: `user:u-${n % 7}~curl`, userId: 'u-1', method: 'GET', route, question, query: parseQueryString(question), status: 200, ms: 1,
            v1Calls: 0 });
        }
        for (const method of ['POST', 'PATCH'] as const) {
          r.note({ client: `user:u-${n++ % 7}~node`, userId: 'u-1', method, route, question: name, query: {}, bodyKeys: [name, 'title', `${name}.x`],
            status: 200, ms: 1, v1Calls: 0 });
        }
      }
    }
    await r.flush();
    const rows = await store.list();
    expect(rows.length).toBeGreaterThan(50);
    for (const row of rows) {
      const shape = JSON.parse(row.shape);
      const e = equivalentOfShape(shape, m, 100);
      expect(e.blocked.map((b) => b.field).filter((f) => NAMES.some((x) => f.includes(x))), row.shape).toEqual([]);
      expect(renderSnippets(e, 'shape1').node).toContain('function');
      if (shape.resource) valuesFrom(shape.resource, { render: [{ id: 'x', title: 'a title' }] }, m).value(shape.filter[0]?.split(' ')[0] ?? 'id', '_eq');
    }
    const report = await migrationReport(store, null, {
      prove: false, now: 0, retentionDays: 30, shapesPerClient: 200, limitDefault: 100, mappings: m,
    });
    expect(report.clients.length).toBe(14);
    expect(reportMarkdown(report)).toContain('# Migration report');
    expect(reportHtml(report)).toContain('</html>');
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(Object.getOwnPropertyNames(Object.getPrototypeOf({})).sort());
  });
});

describe('the operator route after a request naming an inherited member', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ INDEX_ENABLED: 'false' });
    await gw.addUser(0, 'proto@example.com', 'proto-password-123');
  }, 60_000);
  afterAll(async () => gw?.close());

  it('GET /_gateway/migrate answers 200, with or without proofs', async () => {
    const token = await gw.login('proto@example.com', 'proto-password-123');
    for (const q of ['fields=constructor', 'fields=__proto__', 'fields=toString', 'fields=hasOwnProperty', 'fields=valueOf', 'fields=project.constructor']) {
      const res = await gw.get(`/renders?${q}&limit=1`, token);
      expect(res.status, q).toBeLessThan(500);
    }
    await gw.deps.shapes.flush();
    for (const prove of ['false', 'true']) {
      const res = await gw.get(`/_gateway/migrate?prove=${prove}`, TEST_ENV.GATEWAY_ADMIN_TOKEN);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.clients[0].shapes.length).toBeGreaterThan(0);
    }
  }, 60_000);
});
