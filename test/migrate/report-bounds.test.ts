import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { equivalentOfShape } from '../../src/migrate/instantiate.js';
import { prove } from '../../src/migrate/prove.js';
import { migrationReport, type MigrationReport } from '../../src/migrate/report.js';
import { proofDeps } from '../../src/admin/migration-report.js';
import { ClientShapeStore } from '../../src/store/client-shapes.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

/**
 * The migration report survives anything recorded: a question the gateway refuses is not proven (its v1 equivalent is
 * not run), a proof stops at its bounds (v1 calls, related items expanded) and says so, a row that cannot be read is
 * reported as such, and the store is read a client at a time.
 */
let gw: TestGateway;
let user: string;
let token: string;
const deps = () => proofDeps(gw.deps, (o) => gw.app.inject(o as never));

beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false' });
  user = await gw.addUser(0, 'bounds@example.com', 'bounds-password-123');
  token = await gw.login('bounds@example.com', 'bounds-password-123');
}, 60_000);
afterAll(async () => gw?.close());

describe('the migration report, bounded per shape', () => {
  it('a refused question (fields=*.*.*.*.*.*.*&limit=-1, a 400) is recorded but not proven: stopped at the proof\'s bounds', async () => {
    const res = await gw.get('/renders?fields=*.*.*.*.*.*.*&limit=-1', token);
    expect(res.status).toBe(400);
    await gw.deps.shapes.flush();
    const report = (await gw.get('/_gateway/migrate', TEST_ENV.GATEWAY_ADMIN_TOKEN)).body.data as MigrationReport;
    const shape = report.clients.flatMap((c) => c.shapes).find((s) => s.key.includes('*.*.*.*.*.*.*'));
    expect(shape?.errorRate).toBe(1);
    // a read of every item: its v1 calls and their evaluation first, within the proof's bounds; past them the gateway is
    // not asked (attack pass 34, M-1: its answer is not built, parsed and compared)
    expect(shape?.proof).toMatchObject({ result: 'not run', reason: expect.stringMatching(/more than 5000 related items|gateway refuses .*400/) });
    expect(shape!.proof!.v1Calls).toBeLessThanOrEqual(500);
  });

  it('a proof needing more v1 calls than its bound stops there and says so', async () => {
    const shape = gw.deps.shapes.shapeOf({ method: 'GET', route: '/renders', query: { fields: 'id,title', limit: '-1' }, question: 'b1' });
    const e = equivalentOfShape(shape, gw.deps.mappings, 100);
    let asked = 0;
    const counted = { ...deps(), bounds: { v1Calls: 3, relatedItems: 50_000 } };
    const p = await prove(shape, e, user, { ...counted, legacy: async (...a) => { asked++; return counted.legacy(...a); } });
    expect(p).toMatchObject({ result: 'not run', reason: expect.stringMatching(/more than 3 v1 calls/) });
    expect(p.v1Calls).toBeLessThanOrEqual(4);
    // a read of every item: the gateway was not asked for it (its whole answer is not built past the bound)
    expect(asked).toBe(0);
    // within the bound, the same shape is proven
    expect((await prove(shape, e, user, deps())).result).toBe('equal');
  });

  it('a proof expanding more related items than its bound stops there and says so', async () => {
    const shape = gw.deps.shapes.shapeOf({ method: 'GET', route: '/projects', query: { fields: 'id,renders.id,renders.project.title', limit: '-1' }, question: 'b2' });
    const e = equivalentOfShape(shape, gw.deps.mappings, 100);
    let asked = 0;
    const bounded = { ...deps(), bounds: { v1Calls: 500, relatedItems: 5 } };
    const p = await prove(shape, e, user, { ...bounded, legacy: async (...a) => { asked++; return bounded.legacy(...a); } });
    expect(p).toMatchObject({ result: 'not run', reason: expect.stringMatching(/more than 5 related items/) });
    // (attack pass 34, M-1) a read of every item past the bound: the gateway's own answer is not built, parsed or compared
    expect(asked).toBe(0);
  });

  it('the operator route proves within 5 000 related items, whatever MAX_RELATED_ITEMS allows a client (attack pass 34, M-1)', async () => {
    expect(deps().bounds).toEqual({ v1Calls: 500, relatedItems: 5_000 });
    expect(gw.config.MAX_RELATED_ITEMS).toBeGreaterThan(5_000);
  });

  it('reads the store a client at a time, and reports a row it cannot read instead of failing', async () => {
    await gw.deps.shapes.flush();
    const db = gw.deps.db.kysely;
    const row = { user_id: user, count: 1, errors: 0, ms_total: 1, ms_max: 1, calls: '{}', first_seen: 0, last_seen: Date.now(), compared: 0, differing: 0 };
    await db.insertInto('client_shapes').values([
      { ...row, client: 'user:broken~curl', shape_key: 'k-not-json', shape: 'not json' },
      { ...row, client: 'user:broken~curl', shape_key: 'k-empty', shape: '{}' },
      { ...row, client: 'user:broken~node', shape_key: 'k-odd', shape: JSON.stringify({ method: 'GET', route: '/renders', resource: 'render', kind: 'list', fields: 'id', key: 'odd' }) },
    ]).execute();
    const store = new ClientShapeStore(db);
    const asked: (string | undefined)[] = [];
    const list = store.list.bind(store);
    store.list = async (client?: string) => { asked.push(client); return list(client); };
    const report = await migrationReport(store, null, {
      prove: false, now: 0, retentionDays: 30, shapesPerClient: 200, limitDefault: 100, mappings: gw.deps.mappings,
    });
    expect(asked.length).toBeGreaterThan(2);
    expect(asked.every((c) => typeof c === 'string' && c.includes('~')), String(asked)).toBe(true);
    const broken = report.clients.find((c) => c.client === 'user:broken~curl');
    expect(broken?.shapes.map((s) => s.equivalent.notes.join(' '))).toEqual([
      expect.stringMatching(/cannot be read/), expect.stringMatching(/cannot be read/),
    ]);
    expect(report.clients.find((c) => c.client === 'user:broken~node')?.shapes.length).toBe(1);
  });
});
