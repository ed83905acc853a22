import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FilterNode } from '../../src/query/ast.js';
import { compileFilter } from '../../src/query/compile.js';
import { parseQuery } from '../../src/query/parse-query.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { compileColumnFilter } from '../../src/replica/team/column-filter.js';
import { ctx, schemas } from '../query/fixtures.js';
import { RENDER_STATUSES } from '../../src/v1/schemas.js';
import { filterArb, PROJECTS, renderArb, T0, titleArb, world } from './column-world.js';

const render = schemas.render as ResourceSchema;
const parse = (filter: unknown): FilterNode | null => parseQuery({ filter: JSON.stringify(filter) }, render, ctx()).filter;

describe('render filters compiled to tests of column rows', () => {
  it('answers every live row as the record filter answers its record (overlaid rows read from their record)', () => {
    fc.assert(fc.property(
      fc.array(renderArb, { maxLength: 60 }), fc.option(fc.nat(PROJECTS.length - 1), { nil: undefined }), fc.array(filterArb, { minLength: 1, maxLength: 5 }),
      (renders, dropped, filters) => {
        const { snapshot, source } = world(renders, dropped);
        for (const f of filters) {
          const node = parse(f);
          const whole = compileFilter(node, render, schemas, source);
          for (const t of snapshot.teams) {
            const test = compileColumnFilter(node, t.renderColumns(), (n) => compileFilter(n, render, schemas, source), whole);
            expect(test, JSON.stringify(f)).toBeDefined();
            for (const v1 of PROJECTS.map((p) => `${t.id}_${p}`)) {
              for (const row of t.projectRows(v1)) expect(test!(row), JSON.stringify(f)).toBe(whole(t.view(row)));
            }
          }
        }
      },
    ), { numRuns: 150 });
  });

  it('answers a team past the row-by-row threshold from every row\'s answers at once, as the record filter does, as its rows change (issue 44)', () => {
    fc.assert(fc.property(
      fc.array(renderArb, { minLength: 1, maxLength: 40 }), fc.array(filterArb, { minLength: 1, maxLength: 4 }), fc.array(titleArb, { minLength: 1, maxLength: 5 }),
      (base, filters, renamed) => {
        // one team of 4 200 renders (the answers of all rows are made from 4 096), the generated ones over and over
        const renders = Array.from({ length: 4_200 }, (_, n) => ({ ...base[n % base.length]!, team: 0 }));
        const { snapshot, source } = world(renders, undefined);
        const t = snapshot.teams[0]!;
        const cols = t.renderColumns();
        const live = PROJECTS.flatMap((p) => t.projectRows(`${t.id}_${p}`));
        for (const f of filters) {
          const node = parse(f);
          const whole = compileFilter(node, render, schemas, source);
          const test = compileColumnFilter(node, cols, (n) => compileFilter(n, render, schemas, source), whole)!;
          expect(test.all, JSON.stringify(f)).toBeDefined();
          const all = test.all!(cols.c.size);
          for (const row of live) expect(all[row] === 1, JSON.stringify(f)).toBe(whole(t.view(row)));
          // asked row by row (answers of all made once a sixteenth is asked), then again after titles changed
          for (const row of live) expect(test(row), JSON.stringify(f)).toBe(whole(t.view(row)));
          // (every seventh render renamed and moved on: the answers made before no longer hold)
          for (let i = 0; i < 600; i++) {
            const r = t.render(`rend_${i * 7}`)!.render;
            t.apply({ ...r, name: renamed[i % renamed.length]!, status: RENDER_STATUSES[i % RENDER_STATUSES.length]!, updated_at: T0 + 500 + i }, 6);
          }
          t.invalidateRecords();
          for (const row of live) expect(test(row), `${JSON.stringify(f)} after renames`).toBe(whole(t.view(row)));
        }
      },
    ), { numRuns: 12 });
  });

  it('says "not a column filter" for search-like operators, relations, functions and fields the columns do not hold', () => {
    const { snapshot, source } = world([], undefined);
    const t = snapshot.teams[0]!;
    for (const f of [
      { id: { _contains: 'x' } }, { id: { _lt: 'x' } }, { project: { title: { _eq: 'x' } } }, { 'year(date_created)': { _eq: 2023 } },
      { date_created: { _eq: '2023-11-14T22:13:20.000Z' } }, { date_created: { _contains: '2023' } }, { _and: [{ status: { _eq: 'ready' } }, { data: { _null: true } }] },
      { _or: [{ status: { _eq: 'ready' } }, { renders: { _some: { status: { _eq: 'ready' } } } }] },
    ]) {
      let node: FilterNode | null;
      try { node = parse(f); } catch { continue; } // (a filter the schema refuses is not a question)
      expect(compileColumnFilter(node, t.renderColumns(), (n) => compileFilter(n, render, schemas, source), () => true), JSON.stringify(f)).toBeUndefined();
    }
  });

  it('answers the id by equality through the uuid look-up: a scan of every row derives no uuid row by row', () => {
    const { snapshot, source } = world(Array.from({ length: 60 }, (_, n) => ({
      team: n % 2, project: n % PROJECTS.length, status: 'complete' as const, user: null, at: n % 40, updated: null, name: `r${n}`, overlay: null,
    })) as never, undefined);
    const t = snapshot.teams[0]!;
    const cols = t.renderColumns();
    const wanted = t.renderRecord('rend_4')!.id as string;
    const derive = cols.c.uuid;
    let derived = 0;
    cols.c.uuid = function (row: number) {
      derived++;
      return derive.call(this, row);
    };
    try {
      for (const f of [{ id: { _eq: wanted } }, { _or: [{ id: { _in: [wanted.toUpperCase(), wanted] } }, { status: { _eq: 'failed' } }] }, { id: { _neq: wanted } }]) {
        const node = parse(f);
        const whole = compileFilter(node, render, schemas, source);
        const test = compileColumnFilter(node, cols, (n) => compileFilter(n, render, schemas, source), whole)!;
        derived = 0;
        const rows = PROJECTS.flatMap((p) => [...t.projectRows(`${t.id}_${p}`)]);
        const answers = rows.map((row) => test(row));
        expect(derived, JSON.stringify(f)).toBeLessThanOrEqual(2);
        cols.c.uuid = derive;
        expect(answers, JSON.stringify(f)).toEqual(rows.map((row) => whole(t.view(row))));
        cols.c.uuid = function (row: number) {
          derived++;
          return derive.call(this, row);
        };
      }
    } finally {
      cols.c.uuid = derive;
    }
  });
});
