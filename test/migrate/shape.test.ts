import { describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { clientId, userAgentFamily } from '../../src/auth/client-id.js';
import { shapeKey, shapeOf } from '../../src/migrate/shape.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { parseQueryString } from '../../src/query/querystring.js';

const m = loadMappings('mappings');
const dynamic = { now: new Date(0), userId: null, roleId: null };
const shape = (route: string, qs: string, method = 'GET') => {
  const raw = parseQueryString(qs);
  const resource = route.includes('projects') ? 'project' : 'render';
  const q = parseQuery(raw, m.schemas[resource]!, { schemas: m.schemas, dynamic, limitDefault: 100 });
  return shapeOf({ method, route, params: Object.keys(raw) }, q, m.schemas);
};
const UUID = '4f1c1a52-1111-4c1d-9a9a-0123456789ab';

describe('query shapes: the request with its values taken out', () => {
  it('keeps fields, filter paths and operators, sort, paging, aggregates and meta; drops every value', () => {
    const s = shape('/renders', `filter[status][_eq]=complete&filter[project][_eq]=${UUID}&sort=-date_created,title&fields=id,title,project.title` +
      '&limit=7&page=3&meta=filter_count&search=secret%20words');
    expect(s).toMatchObject({
      kind: 'list', resource: 'render', fields: ['id', 'project.title', 'title'], filter: ['project _eq', 'status _eq'],
      filterTree: 'and(project _eq ?,status _eq ?)', search: true, sort: ['-date_created', 'title'], pagination: 'page', meta: ['filter_count'],
    });
    expect(s.filterJson).toEqual({ _and: [{ status: { _eq: '?' } }, { project: { _eq: '?' } }] });
    const text = JSON.stringify(s) + shapeKey(s);
    for (const value of ['complete', UUID, 'secret', '7', '3']) expect(text).not.toContain(value);
  });

  it('equal for the same question with other values, in another order; different for another operator or paging', () => {
    const a = shapeKey(shape('/renders', `filter[status][_eq]=complete&filter[project][_eq]=${UUID}&limit=5`));
    const b = shapeKey(shape('/renders', `filter[project][_eq]=6f1c1a52-1111-4c1d-9a9a-0123456789ab&filter[status][_eq]=failed&limit=50`));
    expect(b).toBe(a);
    expect(shapeKey(shape('/renders', 'filter[status][_in]=complete&limit=5'))).not.toBe(shapeKey(shape('/renders', 'filter[status][_eq]=complete&limit=5')));
    expect(shapeKey(shape('/renders', 'limit=5&offset=10'))).not.toBe(shapeKey(shape('/renders', 'limit=5&page=2')));
    expect(shape('/renders', 'limit=-1').pagination).toBe('all');
    expect(shape('/renders', '').pagination).toBe('default');
  });

  it('aggregates and groups; one-to-many conditions; writes keep only their body keys', () => {
    const s = shape('/renders', 'aggregate[count]=*&groupBy=status');
    expect(s).toMatchObject({ aggregate: ['count(*)'], groupBy: ['status'], fields: [] });
    const rel = shape('/projects', 'filter[renders][_some][status][_eq]=failed');
    expect(rel.filter).toEqual(['renders.status _eq']);
    expect(rel.filterJson).toEqual({ renders: { _some: { status: { _eq: '?' } } } });
    const w = shapeOf({ method: 'PATCH', route: '/render/:id', params: [] }, null, m.schemas, { bodyKeys: ['title'] });
    expect(w).toMatchObject({ kind: 'update', resource: 'render', body: ['title'] });
    expect(shapeKey(w)).toBe('PATCH /render/:id body=title');
  });

  it('a query the gateway refused keeps its parameter names, never access_token', () => {
    const s = shapeOf({ method: 'GET', route: '/renders', params: ['filter', 'access_token'] }, null, m.schemas, { invalid: true });
    expect(s.invalid).toEqual(['filter']);
  });
});

const F = loadMappings('mappings').userAgentFamilies;

describe('client ids', () => {
  it('a fixed list of User-Agent families; the principal by id', () => {
    expect(userAgentFamily('curl/8.5.0', F)).toBe('curl');
    expect(userAgentFamily('python-requests/2.31.0', F)).toBe('python-requests');
    expect(userAgentFamily('Python-urllib/3.12', F)).toBe('python-urllib');
    expect(userAgentFamily('node', F)).toBe('node');
    expect(userAgentFamily('Mozilla/5.0 (X11; Linux x86_64) Chrome/120', F)).toBe('browser');
    expect(userAgentFamily('my-own-thing/1.0 build 1234', F)).toBe('other');
    expect(userAgentFamily(undefined, F)).toBe('none');
    expect(clientId({ via: 'static', tokenId: 'tok-1', userId: 'u' }, 'curl/8', F)).toBe('static:tok-1~curl');
    expect(clientId({ via: 'jwt', userId: 'u-1' }, 'node', F)).toBe('user:u-1~node');
  });
});
