import { describe, expect, it } from 'vitest';
import { FIRST_PART, PART_RELATED } from '../../src/exec/answer-parts.js';
import { execute } from '../../src/exec/execute.js';
import { RawJson } from '../../src/exec/raw-json.js';
import { planQuery } from '../../src/plan/plan.js';
import { ExpansionBudget } from '../../src/query/budget.js';
import type { Rec } from '../../src/query/compile.js';
import { parseQuery } from '../../src/query/parse-query.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { ctx, mappings, schemas } from '../query/fixtures.js';
import { ArraySource, P, render } from './support.js';

/**
 * An answer whose items expand many related items is built in parts of about PART_RELATED related items, each in one
 * turn of the event loop (40 pages of 37 MB — 100 renders, each embedding its project's renders — were built a whole
 * page in a turn and held other users' reads for seconds: attack pass 8). The parts change nothing in the answer.
 */
const EACH = 600; // renders of each project, listed under every render of it

class RelatedSource extends ArraySource {
  override readonly nestedLimit = 10_000;
  /** Related items charged by each evaluation, in order. */
  readonly parts: number[] = [];
  private readonly listed = new Map<string, Rec[]>();
  constructor(recs: Rec[], private readonly budget: ExpansionBudget) {
    super(recs, 50, Number.POSITIVE_INFINITY, 0);
    for (const [p, id] of P.entries()) {
      this.listed.set(id, Array.from({ length: EACH }, (_, i) => render({ project: p, status: i % 5, title: i % 7, at: i }, 100_000 + p * EACH + i)));
    }
  }
  override one(resource: string, id: string): Rec | undefined {
    if (resource === 'project' && P.includes(id)) return { id, title: `project ${P.indexOf(id)}`, account: null, date_created: null };
    return super.one(resource, id);
  }
  override many(resource: string, parent: Rec): readonly Rec[] {
    return resource === 'render' ? this.listed.get(parent.id as string) ?? [] : [];
  }
  override manyAll(resource: string, parent: Rec): readonly Rec[] {
    return this.many(resource, parent);
  }
  /** (a projection is settled with the data it may hold, `most`; filter tests and comparisons without) */
  override async settle<T>(evaluate: () => T, most?: number): Promise<T> {
    const before = this.budget.spent;
    const out = evaluate();
    if (most !== undefined) this.parts.push(this.budget.spent - before);
    return out;
  }
}

async function page(raw: Record<string, unknown>): Promise<{ items: unknown[]; parts: number[] }> {
  const recs = Array.from({ length: 60 }, (_, i) => render({ project: i % 3, status: i % 5, title: i % 7, at: i }, i));
  const budget = new ExpansionBudget(Number.POSITIVE_INFINITY);
  const source = new RelatedSource(recs, budget);
  const q = parseQuery(raw, schemas.render as ResourceSchema, ctx());
  const result = await execute('render', q, planQuery(q, 'render', { statusToV1: mappings.status.toV1, schemas }), source, { schemas, budget });
  const items: unknown[] = [...result.data];
  if (result.stream) for await (const x of result.stream) items.push(x instanceof RawJson ? JSON.parse(Buffer.from(x.json).toString()) : x);
  return { items: JSON.parse(JSON.stringify(items)) as unknown[], parts: source.parts };
}

describe('an answer that expands many related items is built a small part at a time (attack pass 8, M)', () => {
  it('each part expands about PART_RELATED related items (one item at least), and the page is what its items asked one by one are', async () => {
    const { items, parts } = await page({ fields: 'id,title,project.renders.id', limit: '60', sort: 'id' });
    expect(items.length).toBe(60);
    expect((items[0] as { project: { renders: unknown[] } }).project.renders.length).toBe(EACH);
    // every part but the first (FIRST_PART items) within PART_RELATED, or one item; the whole page was one part before
    const perItem = EACH + 1;
    expect(parts[0]).toBeLessThanOrEqual(FIRST_PART * perItem);
    for (const n of parts.slice(1)) expect(n).toBeLessThanOrEqual(Math.max(PART_RELATED, perItem));
    expect(parts.reduce((a, b) => a + b, 0)).toBe(60 * perItem);
    // the reference: each item asked alone (one part each)
    const alone: unknown[] = [];
    for (let i = 0; i < 60; i++) alone.push(...(await page({ fields: 'id,title,project.renders.id', limit: '1', offset: String(i), sort: 'id' })).items);
    expect(items).toEqual(alone);
  });

  it('a page that expands little grows its parts (8, 16, 32, the rest); one that expands nothing is one part', async () => {
    const { items, parts } = await page({ fields: 'id,title,project.title', limit: '60', sort: 'id' });
    expect(items.length).toBe(60);
    expect(parts.length).toBeLessThanOrEqual(4); // (8, 16, 32, then the rest: parts grow while they expand little)
    expect(parts.slice(0, 3)).toEqual([8, 16, 32]);
    const plain = await page({ fields: 'id,title', limit: '60', sort: 'id' });
    expect(plain.parts).toEqual([0]);
  });
});
