import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { equivalentOfShape, instantiate } from '../../src/migrate/instantiate.js';
import { prove, sampleValues, valuesFrom, type Samples } from '../../src/migrate/prove.js';
import { proofDeps } from '../../src/admin/migration-report.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 39, point 2: the proof's values exercise the shape — drawn from the data the key reaches so that each side of a
 * comparison holds items (a date window spanning real renders, an `_in` over two projects), never a degenerate draw
 * (`_gt` equal to `_lt`, a one-value `_in`) that makes both answers empty or the same by construction.
 */
let gw: TestGateway;
let userId: string;
let samples: Samples;
beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false' });
  userId = await gw.addUser(0, 'values@example.com');
  const ctx = { ids: gw.deps.ids, mappings: gw.deps.mappings, timeUnit: gw.config.V1_TIMESTAMP_UNIT };
  samples = await sampleValues(await gw.deps.v1For(userId), ctx);
}, 60_000);
afterAll(async () => gw?.close());

const shapeOf = (query: Record<string, unknown>, question: string) =>
  gw.deps.shapes.shapeOf({ method: 'GET', route: '/renders', query, question });

describe('the values a proof draws', () => {
  it('come from several projects and accounts of the key', () => {
    expect(new Set(samples.render!.map((r) => r.project)).size).toBeGreaterThanOrEqual(2);
    expect(samples.project!.length).toBeGreaterThanOrEqual(2);
    expect(samples.account!.length).toBeGreaterThanOrEqual(1);
  });

  it('put items on both sides of every comparison: an order comparison, a window, an _in of two', () => {
    const v = valuesFrom('render', samples, gw.deps.mappings);
    const dates = samples.render!.map((r) => String(r.date_created));
    const gt = String(v.value('date_created', '_gt'));
    expect(dates.filter((d) => d > gt).length).toBeGreaterThan(0);
    expect(dates.filter((d) => d <= gt).length).toBeGreaterThan(0);
    const [lo, hi] = v.value('date_created', '_between') as string[];
    expect(lo! < hi!).toBe(true);
    expect(dates.filter((d) => d >= lo! && d <= hi!).length).toBeGreaterThan(0);
    expect(dates.filter((d) => d < lo! || d > hi!).length).toBeGreaterThan(0);
    const projects = v.value('project', '_in') as string[];
    expect(new Set(projects).size).toBe(2);
    const accounts = v.value('project.account', '_in') as string[];
    expect(accounts.length).toBe(new Set(samples.account!.map((a) => a.id)).size > 1 ? 2 : 1);
  });
});

describe('a proof over such values', () => {
  const proofOf = async (query: Record<string, unknown>, question: string) => {
    const shape = shapeOf(query, question);
    const e = equivalentOfShape(shape, gw.deps.mappings, gw.config.QUERY_LIMIT_DEFAULT);
    const raw = instantiate(shape, valuesFrom('render', samples, gw.deps.mappings));
    return { proof: await prove(shape, e, userId, proofDeps(gw.deps, (o) => gw.app.inject(o as any))), raw };
  };

  it('an _in over two projects is proven with two (it was proven with one, and said "equal" while the equivalent read one project)', async () => {
    const ids = samples.project!.slice(0, 2).map((p) => String(p.id));
    const { proof } = await proofOf({ filter: JSON.stringify({ project: { _in: ids } }), fields: 'id,title', limit: '-1' }, 'in-projects');
    const legacy = await gw.app.inject({
      method: 'GET', url: `/renders?limit=-1&fields=id,project&filter=${encodeURIComponent(JSON.stringify({ project: { _in: ids } }))}`,
      headers: { authorization: `Bearer ${await gw.deps.jwt.sign({ id: userId, role: 'x', app_access: true, admin_access: false })}` },
    });
    // the gateway answers both projects' renders: an equivalent reading one project is short of it
    expect(new Set((legacy.json() as { data: { project: string }[] }).data.map((r) => r.project)).size).toBe(2);
    // the equivalent walks each project the filter names: one list call each, and the answers agree
    expect(proof, JSON.stringify(proof)).toMatchObject({ result: 'equal', v1Calls: 2 });
    // the values drawn are not written to the report: the request it shows has them as ?
    for (const id of ids) expect(proof.request).not.toContain(id);
    expect(decodeURIComponent(proof.request ?? '')).toBe('GET /renders?fields=id,title&filter={"project":{"_in":["?","?"]}}&limit=-1');
  });

  it('a date window spanning real renders is proven: the equivalent walks the renders and filters the window (it made no call)', async () => {
    const since = String(samples.render![0]!.date_created);
    const { proof } = await proofOf({ filter: JSON.stringify({ date_created: { _gte: since } }), fields: 'id,title', sort: '-date_created' }, 'since');
    expect(proof.result, JSON.stringify(proof)).toBe('equal');
    expect(proof.v1Calls).toBeGreaterThan(1);
  });
});
