import { describe, expect, it } from 'vitest';
import { Compare, FieldRef, Relation, type FilterNode } from '../../src/query/ast.js';
import { ExpansionBudget } from '../../src/query/budget.js';
import { compileFilter, type Lookup, type Rec } from '../../src/query/compile.js';
import { compileProjection } from '../../src/query/project.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { schemas } from './fixtures.js';

/**
 * A relational filter's walk (`filter[project][renders][…]`) is made once per holder, not once per record reaching it
 * (attack pass 12, H: four levels of project.renders under a root filter, or inside a deep _filter, walked 40^k renders
 * and froze an instance for minutes). The answer is the same, and it is walked again when the look-ups move (`version`).
 */
const render = schemas.render as ResourceSchema;
const P = (n: number) => `aaaaaaaa-0000-4000-8000-${String(n).padStart(12, '0')}`;
const R = (n: number) => `bbbbbbbb-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** 6 projects of 12 renders; render 5 of project 2 is titled "needle". Counts the walks of project.renders. */
function world() {
  const projects: Rec[] = Array.from({ length: 6 }, (_, p) => ({ id: P(p), name: `p${p}` }));
  const renders: Rec[] = projects.flatMap((_, p) => Array.from({ length: 12 }, (_, i) => ({ id: R(p * 100 + i), project: P(p), title: p === 2 && i === 5 ? 'needle' : `r${p}-${i}` })));
  let walks = 0;
  const lookup: Lookup & { version: number } = {
    version: 0,
    one: (resource, id) => (resource === 'project' ? projects : renders).find((x) => x.id === id),
    many: (_resource, parent, field, parentResource) => {
      if (parentResource !== 'project' || field !== 'renders') return [];
      walks++;
      return renders.filter((x) => x.project === parent.id);
    },
    // (a relational filter walks every related item: manyAll; so does a deep option's choice)
    manyAll: (_resource, parent, field, parentResource) => {
      if (parentResource !== 'project' || field !== 'renders') return [];
      walks++;
      return renders.filter((x) => x.project === parent.id);
    },
  };
  return { projects, renders, lookup, walks: () => walks };
}

/** `levels` × project.renders, then title = `title`. */
function nested(levels: number, title: string): FilterNode {
  let node: FilterNode = Compare.create(FieldRef.create(['title']), '_eq', title);
  for (let i = 0; i < levels; i++) node = Relation.create(['project', 'renders'], 'some', node);
  return node;
}

describe('relational filters walk each holder once (attack pass 12, H)', () => {
  it('four levels of project.renders: the renders of the project holding "needle", each holder walked once a level', () => {
    const w = world();
    const keep = compileFilter(nested(4, 'needle'), render, schemas, w.lookup);
    const kept = w.renders.filter(keep).map((r) => r.id);
    // the reference, by hand: every render of the project holding a render titled "needle"
    const holder = w.renders.find((r) => r.title === 'needle')!.project;
    expect(kept).toEqual(w.renders.filter((r) => r.project === holder).map((r) => r.id));
    // 4 levels × 6 projects at most (without the memory: 72 + 72·12 + … walks)
    expect(w.walks()).toBeLessThanOrEqual(4 * 6);
  });

  it('walks again once the look-ups move (a live record map filled what it missed)', () => {
    const w = world();
    const keep = compileFilter(nested(1, 'late'), render, schemas, w.lookup);
    expect(w.renders.filter(keep)).toEqual([]);
    (w.renders[0] as Record<string, unknown>).title = 'late'; // (what a later round of the live path would answer)
    expect(w.renders.filter(keep)).toEqual([]); // the same version: kept answers
    w.lookup.version++;
    expect(w.renders.filter(keep).map((r) => r.project)).toEqual(w.renders.filter((r) => r.project === w.renders[0]!.project).map((r) => r.project));
  });

  it('a deep _filter holding relations, under every parent: the same choice, its walks once per holder; a long deep _search is charged by its length', () => {
    const w = world();
    const deep = { filter: nested(2, 'needle'), search: null, sort: [], offset: 0, limit: -1, children: {} };
    const project = compileProjection([{ kind: 'Select', path: ['renders', 'id'] }], schemas.project as ResourceSchema, schemas, w.lookup, undefined, { deep: { filter: null, search: null, sort: [], offset: 0, children: { renders: deep } } });
    const out = w.projects.map(project) as { renders: { id: string }[] }[];
    const holder = w.renders.find((r) => r.title === 'needle')!.project;
    // (a render's project is its own: only the holder's renders reach a render titled "needle")
    expect(out.map((p) => p.renders.map((r) => r.id))).toEqual(w.projects.map((p) => (p.id === holder ? w.renders.filter((r) => r.project === holder).map((r) => r.id) : [])));
    // 2 levels × 6 projects, and each parent's candidates once
    expect(w.walks()).toBeLessThanOrEqual(2 * 6 + 6);
    // a 500 000-character search under 6 parents of 12 candidates: 6 × 12 × 15 626 tests, 11 250 units — past a budget of 5 000
    const long = { filter: null, search: 'x'.repeat(500_000), sort: [], offset: 0, limit: -1, children: {} };
    const searching = compileProjection([{ kind: 'Select', path: ['renders', 'id'] }], schemas.project as ResourceSchema, schemas, w.lookup, new ExpansionBudget(5_000), { deep: { filter: null, search: null, sort: [], offset: 0, children: { renders: long } } });
    expect(() => w.projects.map(searching)).toThrow(/deep filters, searches and sorts would test more than/);
  });
});
