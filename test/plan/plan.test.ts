import { describe, expect, it } from 'vitest';
import { planQuery } from '../../src/plan/plan.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { ctx, mappings, schemas } from '../query/fixtures.js';

const U1 = '7d444840-9dc0-11d1-b245-5ffdce74fad2';
const U2 = '8e555951-9dc0-11d1-b245-5ffdce74fad2';
const plan = (raw: Record<string, unknown>, resource = 'render') => planQuery(parseQuery(raw, schemas[resource]!, ctx()), resource, { statusToV1: mappings.status.toV1, schemas });

describe('the plan as the whole compiled artifact', () => {
  it('names its v1 page sizes: the first page of a merge is no larger than the answer needs; scans read whole pages; by id none', () => {
    expect(plan({ limit: '5' }).pages).toEqual({ first: 5, next: 60 });
    expect(plan({ limit: '5', page: '3' }).pages).toEqual({ first: 15, next: 60 });
    expect(plan({ limit: '500' }).pages).toEqual({ first: 60, next: 60 });
    expect(plan({ limit: '5', filter: { title: { _contains: 'a' } } }).pages).toEqual({ first: 60, next: 60 });
    expect(plan({ limit: '-1' }).pages).toEqual({ first: 60, next: 60 });
    expect(plan({ sort: 'title', limit: '5' }).pages).toEqual({ first: 60, next: 60 });
    expect(plan({ filter: { id: { _eq: U1 } } }).pages).toBeNull();
  });
  it('names every relation the query reads, from filter, sort, groupBy, fields, count() and deep', () => {
    expect(plan({ limit: '5' }).relations).toEqual([]);
    expect(plan({ fields: 'id,project.account.name', sort: 'project.title', filter: { account: { name: { _eq: 'x' } } } }).relations)
      .toEqual(['account', 'project', 'project.account']);
    expect(plan({ groupBy: 'project', aggregate: { count: '*' } }).relations).toEqual(['project']);
    expect(plan({ fields: 'id,count(renders)' }, 'project').relations).toEqual(['renders']);
    expect(plan({ filter: { renders: { _some: { project: { title: { _eq: 'x' } } } } } }, 'project').relations).toEqual(['renders', 'renders.project']);
    expect(plan({ fields: 'renders.id', deep: { renders: { _filter: { account: { name: { _eq: 'x' } } } } } }, 'project').relations)
      .toEqual(['renders', 'renders.account']);
    // a plain field is no relation
    expect(plan({ fields: 'id,title', filter: { status: { _eq: 'complete' } }, sort: '-date_created' }).relations).toEqual([]);
  });
});

describe('the plan for each query shape', () => {
  it('a plain list: merge in v1 order (newest first), stop after offset + limit', () => {
    expect(plan({ limit: '20' })).toMatchObject({ strategy: 'merge', pushdown: { order: 'desc', status: null }, stopAfter: 20, scope: { accounts: null, projects: null } });
    expect(plan({ limit: '50', page: '5' })).toMatchObject({ strategy: 'merge', stopAfter: 250 });
  });
  it('without a sort, the resource default from the mappings decides (newest first merges; another default scans)', () => {
    const titled = { ...schemas, render: { ...schemas.render!, defaultSort: ['title', 'id'] } };
    const q = parseQuery({ limit: '20' }, schemas.render!, ctx());
    expect(planQuery(q, 'render', { statusToV1: mappings.status.toV1, schemas }).pushdown.order).toBe('desc');
    expect(planQuery(q, 'render', { statusToV1: mappings.status.toV1, schemas: titled })).toMatchObject({ strategy: 'scan', pushdown: { order: null } });
  });
  it('a date_created sort becomes order=', () => {
    expect(plan({ sort: 'date_created' }).pushdown.order).toBe('asc');
    expect(plan({ sort: '-date_created,id' }).pushdown.order).toBe('desc');
    expect(plan({ sort: 'title' })).toMatchObject({ strategy: 'scan', pushdown: { order: null }, stopAfter: null });
  });
  it('id _eq/_in → direct GETs', () => {
    expect(plan({ filter: { id: { _eq: U1 } } })).toMatchObject({ strategy: 'direct', ids: [U1] });
    expect(plan({ filter: { id: { _in: [U1, U2] } } })).toMatchObject({ strategy: 'direct', ids: [U1, U2] });
    expect(plan({ filter: { _and: [{ id: { _in: [U1, U2] } }, { id: { _eq: U2 } }] } }).ids).toEqual([U2]);
    expect(plan({ filter: { id: { _eq: U1 } } }, 'project').strategy).toBe('direct');
    expect(plan({ filter: { id: { _eq: U1 } } }, 'template').strategy).toBe('scan'); // v1 needs the template's project
    expect(plan({ filter: { id: { _eq: U1 } } }, 'account')).toMatchObject({ strategy: 'scan', scope: { accounts: [U1] } });
  });
  it('project and account filters narrow the scope; _or does not', () => {
    expect(plan({ filter: { project: { _eq: U1 } } }).scope).toEqual({ accounts: null, projects: [U1] });
    expect(plan({ filter: { account: { _in: [U1, U2] } } }).scope).toEqual({ accounts: [U1, U2], projects: null });
    expect(plan({ filter: { _or: [{ project: { _eq: U1 } }, { title: { _eq: 'x' } }] } }).scope).toEqual({ accounts: null, projects: null });
    expect(plan({ filter: { account: { _eq: U1 } } }, 'project').scope.accounts).toEqual([U1]);
  });
  it('a status filter mapping to exactly one v1 status is pushed down; ready means two; deleted none', () => {
    expect(plan({ filter: { status: { _eq: 'complete' } } })).toMatchObject({ pushdown: { status: 'complete' }, statuses: ['complete'] });
    expect(plan({ filter: { status: { _eq: 'ready' } } })).toMatchObject({ pushdown: { status: null }, statuses: ['ready', 'queued'] });
    expect(plan({ filter: { status: { _eq: 'deleted' } } })).toMatchObject({ statuses: [] });
    expect(plan({ filter: { status: { _in: ['encoding', 'deleted'] } } }).pushdown.status).toBe('finalizing');
  });
  it('the residual is always the whole filter (pushed parts re-checked in memory)', () => {
    const raw = { filter: { status: { _eq: 'complete' }, title: { _contains: 'x' } } };
    const p = plan(raw);
    expect(p.pushdown.status).toBe('complete');
    expect(p.residual).toEqual(parseQuery(raw, schemas.render!, ctx()).filter);
  });
  it('filter_count, total_count, aggregates and limit=-1 need a scan of the allowed scope', () => {
    expect(plan({ meta: 'filter_count' }).strategy).toBe('scan');
    expect(plan({ meta: 'total_count' }).strategy).toBe('scan');
    expect(plan({ aggregate: { count: '*' }, groupBy: 'status' }).strategy).toBe('scan');
    expect(plan({ limit: '-1', sort: 'title' }).strategy).toBe('scan');
    expect(plan({ limit: '-1', sort: 'title', filter: { project: { _eq: U1 } } })).toMatchObject({ strategy: 'scan', scope: { projects: [U1] } });
  });
  it('limit=-1 in v1 order streams through the merge without a stop', () => {
    expect(plan({ limit: '-1' })).toMatchObject({ strategy: 'merge', stopAfter: null, pushdown: { order: 'desc' } });
  });
  it('is plain data', () => {
    const p = plan({ filter: { project: { _eq: U1 } } });
    expect(Object.isFrozen(p)).toBe(true);
    expect(JSON.parse(JSON.stringify(p))).toMatchObject({ strategy: 'merge' });
  });
});
