import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { execute } from '../../src/exec/execute.js';
import { planQuery } from '../../src/plan/plan.js';
import { unlimited } from '../../src/query/budget.js';
import { parseQuery } from '../../src/query/parse-query.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { ctx, mappings, schemas } from '../query/fixtures.js';
import { ArraySource, P, reference, render, run, STATUSES, TITLES } from './support.js';

const seed = fc.record({ project: fc.nat(2), status: fc.nat(4), title: fc.nat(TITLES.length - 1), at: fc.nat(12) });
const kase = fc.record({
  status: fc.option(fc.subarray(STATUSES, { minLength: 1 }), { nil: undefined }),
  project: fc.option(fc.constantFrom(...P), { nil: undefined }),
  title: fc.option(fc.constantFrom('a', 'be', 'ü', 'zz'), { nil: undefined }),
  sort: fc.constantFrom('-date_created', 'date_created', 'title', '-title,date_created', 'status,-date_created', '-date_created,-id'),
  limit: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.constant(-1)),
  offset: fc.nat(25),
  meta: fc.option(fc.constantFrom('filter_count', 'total_count'), { nil: undefined }),
});

describe('the executor over a record source', () => {
  it('answers as the reference does, whatever the batch size, the compaction point and the order of ties in a run', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(seed, { maxLength: 70 }), kase, fc.integer({ min: 1, max: 9 }), fc.constantFrom(0, 4, Number.POSITIVE_INFINITY), fc.nat(10),
        async (seeds, c, batch, compactAfter, shuffle) => {
          const recs = seeds.map(render);
          const source = new ArraySource(recs, batch, compactAfter, shuffle);
          const got = await run(source, c);
          const want = reference(recs, c);
          expect(got.data).toEqual(want.data);
          expect(got.meta).toEqual(want.meta);
          // exactly the answered renders have their pairs recorded (a scan may prepare more: a batch's worth)
          expect(new Set(source.remembered)).toEqual(new Set(want.data.map((id) => `ref:${id}`)));
          for (const id of want.data) expect(source.prepared).toContain(id);
        }),
      { numRuns: 400 },
    );
  });

  it('walks the date order when the plan merges, and stops reading once the page is settled', async () => {
    const recs = Array.from({ length: 300 }, (_, i) => render({ project: i % 3, status: i % 5, title: i % 7, at: i }, i));
    const source = new ArraySource(recs, 10, Number.POSITIVE_INFINITY, 0);
    const got = await run(source, { sort: '-date_created', limit: 5, offset: 3 });
    expect(got.plan.strategy).toBe('merge');
    expect(got.how?.strategy).toBe('newest-first walk');
    expect(got.data).toEqual(reference(recs, { sort: '-date_created', limit: 5, offset: 3 }).data);
    // three runs, a batch of ten each read (the next batch only if its run still leads): far fewer than 300 tested
    expect(got.how!.tested).toBeLessThanOrEqual(40);
    expect(got.how!.matched).toBe(8);
    const asc = await run(source, { sort: 'date_created', limit: 4, offset: 0 });
    expect(asc.how?.strategy).toBe('oldest-first walk');
    expect(asc.data).toEqual(reference(recs, { sort: 'date_created', limit: 4, offset: 0 }).data);
  });

  it('keeps a top-k, not the whole scope, for a page of a large scan; a small scope is sorted whole', async () => {
    const recs = Array.from({ length: 5000 }, (_, i) => render({ project: i % 3, status: i % 5, title: i % 7, at: i % 13 }, i));
    const source = new ArraySource(recs, 700, Number.POSITIVE_INFINITY, 0);
    const top = await run(source, { sort: 'title', limit: 10, offset: 20, meta: 'filter_count' });
    expect(top.how).toEqual({ strategy: 'top-k over the scope', tested: 5000, matched: 5000 });
    expect(top.data).toEqual(reference(recs, { sort: 'title', limit: 10, offset: 20 }).data);
    expect(top.meta).toEqual({ filter_count: 5000 });
    const whole = await run(new ArraySource(recs.slice(0, 50), 7, Number.POSITIVE_INFINITY, 0), { sort: 'title', limit: 10, offset: 0 });
    expect(whole.how?.strategy).toBe('sort of the scope');
  });

  it('aggregates over the matches; a status with no v1 counterpart reads nothing and still counts the scope', async () => {
    const recs = Array.from({ length: 40 }, (_, i) => render({ project: i % 3, status: i % 5, title: i % 7, at: i }, i));
    const source = new ArraySource(recs, 6, 4, 0);
    const q = parseQuery({ aggregate: JSON.stringify({ count: '*' }), groupBy: 'status', sort: 'status' }, schemas.render as ResourceSchema, ctx());
    const plan = planQuery(q, 'render', { statusToV1: mappings.status.toV1, schemas });
    const result = await execute('render', q, plan, source, { schemas, budget: unlimited() });
    expect(result.data).toEqual(STATUSES.slice().sort().map((s) => ({ status: s, count: '8' })));
    expect(source.remembered).toEqual([]); // no render uuid is answered
    // an aggregate's sort names its aggregates, not a record field: it orders the groups
    const byCount = parseQuery({ aggregate: JSON.stringify({ count: '*' }), groupBy: 'project', sort: '-count' }, schemas.render as ResourceSchema, ctx());
    const counted = await execute('render', byCount, planQuery(byCount, 'render', { statusToV1: mappings.status.toV1, schemas }), source, { schemas, budget: unlimited() });
    expect((counted.data as { count: string }[]).map((r) => Number(r.count))).toEqual([14, 13, 13]);
    const none = parseQuery({ filter: JSON.stringify({ status: { _eq: 'no-such-status' } }), meta: 'total_count' }, schemas.render as ResourceSchema, ctx());
    const nothing = await execute('render', none, planQuery(none, 'render', { statusToV1: mappings.status.toV1, schemas }), new ArraySource(recs, 6, Infinity, 0), { schemas, budget: unlimited() });
    expect(nothing).toEqual({ meta: { total_count: 40 }, data: [] });
  });
});
