import { describe, expect, it } from 'vitest';
import { Compare, FieldRef, Query, Select, Sort } from '../../src/query/ast.js';
import { ExpansionBudget, unlimited } from '../../src/query/budget.js';
import { adjustDate, MAX_ADJUSTMENT_LENGTH, resolveDynamic, type DynamicContext } from '../../src/query/dynamic.js';
import { fieldsToSelect } from '../../src/query/fields-used.js';
import { Issues } from '../../src/query/issues.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { parseQueryString } from '../../src/query/querystring.js';
import { buildMeta, effectiveSort, runQuery, selectRecords } from '../../src/query/run.js';
import { withAliases, type ResourceSchema } from '../../src/query/schema.js';
import { GatewayError } from '../../src/errors/catalog.js';
import { ctx, lookup, renders, schemas, NOW, ROLE, USER } from './fixtures.js';
import { item, shop } from './shop-fixtures.js';

const dyn: DynamicContext = { now: NOW, userId: USER, roleId: ROLE, user: { id: USER, email: 'me@x.io' } };

describe('dynamic variables', () => {
  it('pass anything that is not a $ string through', () => {
    expect(resolveDynamic(5, dyn)).toEqual({ ok: true, value: 5 });
    expect(resolveDynamic('NOW', dyn)).toEqual({ ok: true, value: 'NOW' });
    expect(resolveDynamic('x$NOW', dyn)).toEqual({ ok: true, value: 'x$NOW' });
    expect(resolveDynamic('$OTHER', dyn)).toEqual({ ok: true, value: '$OTHER' });
    expect(resolveDynamic('$CURRENT_USER.', dyn)).toEqual({ ok: true, value: '$CURRENT_USER.' });
    expect(resolveDynamic('$NOWX', dyn)).toEqual({ ok: true, value: '$NOWX' });
  });
  it('$NOW and $NOW(adjustment) are ISO instants marked as dates', () => {
    expect(resolveDynamic('$NOW', dyn)).toEqual({ ok: true, value: '2026-06-15T12:00:00.000Z', isDate: true });
    expect(resolveDynamic('$NOW(-1 hour)', dyn)).toEqual({ ok: true, value: '2026-06-15T11:00:00.000Z', isDate: true });
    expect(resolveDynamic('$NOW()', dyn)).toMatchObject({ ok: false });
  });
  it('an unusable adjustment is a reason naming it, or its length when too long', () => {
    expect(resolveDynamic('$NOW(1 fortnight)', dyn)).toEqual({
      ok: false, reason: 'Invalid $NOW adjustment "1 fortnight": use a sign, a number and a unit such as "-30 days" (send + as %2B)',
    });
    const long = '1'.repeat(MAX_ADJUSTMENT_LENGTH + 1);
    expect(resolveDynamic(`$NOW(${long})`, dyn)).toEqual({
      ok: false, reason: `Invalid $NOW adjustment longer than ${MAX_ADJUSTMENT_LENGTH} characters: use a sign, a number and a unit such as "-30 days" (send + as %2B)`,
    });
    // within the length but past any representable date
    const huge = '9'.repeat(MAX_ADJUSTMENT_LENGTH - 4);
    expect(resolveDynamic(`$NOW(${huge} y)`, dyn)).toEqual({
      ok: false, reason: `Invalid $NOW adjustment "${huge} y": use a sign, a number and a unit such as "-30 days" (send + as %2B)`,
    });
    expect(resolveDynamic(`$NOW(${huge})`, dyn)).toMatchObject({ ok: false });
  });
  it('$CURRENT_USER, $CURRENT_ROLE and $CURRENT_USER.<field> (null when unknown or anonymous)', () => {
    expect(resolveDynamic('$CURRENT_USER', dyn)).toEqual({ ok: true, value: USER });
    expect(resolveDynamic('$CURRENT_ROLE', dyn)).toEqual({ ok: true, value: ROLE });
    expect(resolveDynamic('$CURRENT_USER.email', dyn)).toEqual({ ok: true, value: 'me@x.io' });
    expect(resolveDynamic('$CURRENT_USER.nope', dyn)).toEqual({ ok: true, value: null });
    const anon: DynamicContext = { now: NOW, userId: null, roleId: null };
    expect(resolveDynamic('$CURRENT_USER', anon)).toEqual({ ok: true, value: null });
    expect(resolveDynamic('$CURRENT_ROLE', anon)).toEqual({ ok: true, value: null });
    expect(resolveDynamic('$CURRENT_USER.email', anon)).toEqual({ ok: true, value: null });
  });
  it('adjustments: length bound, decimals, truncated months and years, clamped days, time kept', () => {
    expect(adjustDate(NOW, `1${' '.repeat(MAX_ADJUSTMENT_LENGTH - 1)}`)!.toISOString()).toBe('2026-06-16T12:00:00.000Z');
    expect(adjustDate(NOW, `1${' '.repeat(MAX_ADJUSTMENT_LENGTH)}`)).toBeUndefined();
    expect(adjustDate(NOW, '.5')!.toISOString()).toBe('2026-06-16T00:00:00.000Z');
    expect(adjustDate(NOW, '-.5 h')!.toISOString()).toBe('2026-06-15T11:30:00.000Z');
    expect(adjustDate(NOW, '1.')).toBeUndefined();
    expect(adjustDate(NOW, '1.5 months')!.toISOString()).toBe('2026-07-15T12:00:00.000Z');
    expect(adjustDate(NOW, '-1.5 years')!.toISOString()).toBe('2025-06-15T12:00:00.000Z');
    expect(adjustDate(new Date('2024-01-31T08:09:10.011Z'), '1 month')!.toISOString()).toBe('2024-02-29T08:09:10.011Z');
    expect(adjustDate(new Date('2024-02-29T00:00:00Z'), '1 year')!.toISOString()).toBe('2025-02-28T00:00:00.000Z');
    expect(adjustDate(new Date('2026-03-31T00:00:00Z'), '-1 month')!.toISOString()).toBe('2026-02-28T00:00:00.000Z');
    expect(adjustDate(new Date('2026-12-15T00:00:00Z'), '1 mo')!.toISOString()).toBe('2027-01-15T00:00:00.000Z');
    expect(adjustDate(NOW, '1 days ago')).toBeUndefined();
    expect(adjustDate(NOW, 'x1')).toBeUndefined();
    expect(adjustDate(NOW, '1 d x')).toBeUndefined();
  });
});

// expected answers checked against qs 6 (qs.parse(s, { depth: 10 })), the parser Directus uses
describe('query string (qs, depth 10, arrayLimit 20)', () => {
  it('keeps nesting for ten brackets; the rest is one literal key', () => {
    const ten = parseQueryString('a[b1][b2][b3][b4][b5][b6][b7][b8][b9][b10]=x') as any;
    expect(ten.a.b1.b2.b3.b4.b5.b6.b7.b8.b9.b10).toBe('x');
    const eleven = parseQueryString('a[b1][b2][b3][b4][b5][b6][b7][b8][b9][b10][b11][b12]=x') as any;
    expect(eleven.a.b1.b2.b3.b4.b5.b6.b7.b8.b9.b10).toEqual({ '[b11][b12]': 'x' });
  });
  it('indexes up to 20 make arrays, beyond or mixed with names objects', () => {
    expect(parseQueryString('a[]=x&a[]=y')).toEqual({ a: ['x', 'y'] });
    const twenty = parseQueryString('a[0]=x&a[20]=y').a as string[];
    expect(Array.isArray(twenty)).toBe(true);
    expect(twenty.filter(() => true)).toEqual(['x', 'y']); // qs compacts; holes are skipped here either way
    expect(Array.isArray(parseQueryString('a[0]=x&a[21]=y').a)).toBe(false);
    expect(parseQueryString('a[0]=x&a[b]=y')).toEqual({ a: { 0: 'x', b: 'y' } });
    expect(parseQueryString('a=x&a[]=y')).toEqual({ a: ['x', 'y'] });
  });
  it('decodes percent escapes and +, keeps malformed escapes, skips empty keys and pairs', () => {
    expect(parseQueryString('q=a%2Bb+c')).toEqual({ q: 'a+b c' });
    expect(parseQueryString('q=%E0%A4%A')).toEqual({ q: '%E0%A4%A' });
    expect(parseQueryString('q=%zz+1')).toEqual({ q: '%zz 1' });
    expect(parseQueryString('&&=x&q')).toEqual({ q: '' });
    expect(parseQueryString('')).toEqual({});
    expect(parseQueryString('a=1=2')).toEqual({ a: '1=2' });
    expect(parseQueryString('__proto__=1&prototype=2&x=3')).toEqual({ x: '3' });
    expect(Object.keys(parseQueryString('a[__proto__][x]=1&a[constructor][y]=2').a as object)).toEqual([]);
  });
});

describe('order of a query', () => {
  const sortOf = (raw: Record<string, unknown>, resource = schemas.render!) => effectiveSort(parseQuery(raw, resource, ctx()), resource);
  it('its sort, or the resource default, with the id as the last tie-break unless already there', () => {
    expect(sortOf({})).toEqual([Sort.create(FieldRef.create(['date_created']), 'desc'), Sort.create(FieldRef.create(['id']), 'asc')]);
    expect(sortOf({ sort: 'title' })).toEqual([Sort.create(FieldRef.create(['title']), 'asc'), Sort.create(FieldRef.create(['id']), 'asc')]);
    expect(sortOf({ sort: '-id,title' })).toEqual([Sort.create(FieldRef.create(['id']), 'desc'), Sort.create(FieldRef.create(['title']), 'asc')]);
    expect(sortOf({ sort: 'project.id' })).toEqual([Sort.create(FieldRef.create(['project', 'id']), 'asc'), Sort.create(FieldRef.create(['id']), 'asc')]);
    expect(sortOf({}, schemas.account!)).toEqual([Sort.create(FieldRef.create(['id']), 'asc')]);
  });
  it('reads descending and dotted defaults', () => {
    const r: ResourceSchema = { ...item, defaultSort: ['-owner.name'] };
    expect(effectiveSort(parseQuery({}, r, ctx({ schemas: shop })), r)).toEqual([
      Sort.create(FieldRef.create(['owner', 'name']), 'desc'), Sort.create(FieldRef.create(['id']), 'asc'),
    ]);
  });
});

describe('selecting and answering', () => {
  const agg = { numericStrings: true };
  it('groupBy alone groups; meta counts the total given and the matches', () => {
    const q = parseQuery({ groupBy: 'status', filter: { status: { _in: 'failed,draft' } }, meta: '*' }, schemas.render!, ctx());
    expect(selectRecords(renders, q, schemas, lookup, agg, 99)).toEqual({ meta: { total_count: 99, filter_count: 2 }, rows: [{ status: 'draft' }, { status: 'failed' }] });
    expect(runQuery(renders, q, schemas, lookup, agg)).toEqual({ meta: { total_count: 7, filter_count: 2 }, data: [{ status: 'draft' }, { status: 'failed' }] });
  });
  it('no meta key when none was asked; pages of records otherwise', () => {
    const q = parseQuery({ sort: 'id', limit: '2', offset: '5', fields: 'status' }, schemas.render!, ctx());
    const res = runQuery(renders, q, schemas, lookup, agg);
    expect('meta' in res).toBe(false);
    expect(res.data).toEqual([{ status: 'encoding' }, { status: 'complete' }]);
    const all = selectRecords(renders, parseQuery({ limit: '-1', offset: '5', sort: 'id' }, schemas.render!, ctx()), schemas, lookup, agg);
    expect(all.page!.map((r) => r.status)).toEqual(['encoding', 'complete']);
    expect('meta' in all).toBe(false);
  });
  it('buildMeta answers the keys asked, in order', () => {
    const q = parseQuery({ meta: 'filter_count,total_count' }, schemas.render!, ctx());
    expect(Object.entries(buildMeta(q, 10, 3)!)).toEqual([['filter_count', 3], ['total_count', 10]]);
    expect(buildMeta(parseQuery({}, schemas.render!, ctx()), 10, 3)).toBeUndefined();
  });
});

describe('fields a selection reads', () => {
  const used = (raw: Record<string, unknown>, resource: ResourceSchema = schemas.project!) => [...fieldsToSelect(parseQuery(raw, resource, ctx({ schemas: { ...schemas, ...shop } })), resource)].sort();
  it('relation roots, function roots, default sorts with + and dotted paths', () => {
    expect(used({ filter: { renders: { _some: { status: 'x' } } }, sort: 'id' })).toEqual(['id', 'renders']);
    expect(used({ filter: { _or: [{ title: 'a' }, { account: { name: 'b' } }] }, sort: 'id' })).toEqual(['account', 'id', 'title']);
    expect(used({ aggregate: { count: '*' }, groupBy: 'month(date_created)', sort: 'status' })).toEqual(['date_created', 'id', 'status']);
    expect(used({ sort: 'account.name' })).toEqual(['account', 'id']);
    expect(used({ filter: { title: 'a', account: { name: 'b' } }, sort: 'id' })).toEqual(['account', 'id', 'title']);
    const r: ResourceSchema = { ...item, defaultSort: ['+name', '-owner.name'] };
    expect(used({}, r)).toEqual(['id', 'name', 'owner']);
    expect(used({ sort: 'n' }, r)).toEqual(['id', 'n']);
  });
});

describe('aliases in the schema', () => {
  it('leaves the resource alone without aliases; adds each alias as a field reading its target', () => {
    expect(withAliases(item, undefined)).toBe(item);
    expect(withAliases(item, {})).toBe(item);
    const a = withAliases(item, { hot: 'tags', ghost: 'nope' });
    expect(a.fields.hot).toEqual({ ...item.fields.tags, name: 'hot', aliasOf: 'tags' });
    expect(Object.hasOwn(a.fields, 'ghost')).toBe(false);
    expect(a.fields.name).toBe(item.fields.name);
    expect(Object.hasOwn(item.fields, 'hot')).toBe(false);
    expect(Object.getPrototypeOf(a.fields)).toBeNull();
    expect(a.key).toBe('item');
  });
});

describe('issues and budgets', () => {
  it('keeps the first 50 problems and throws them as one 400', () => {
    const issues = new Issues();
    expect(issues.empty).toBe(true);
    expect(() => issues.throwIfAny()).not.toThrow();
    for (let i = 0; i < 60; i++) issues.add(`p${i}`, 'r');
    expect(issues.empty).toBe(false);
    expect(issues.list).toHaveLength(50);
    expect(issues.list[49]).toEqual({ path: 'p49', reason: 'r' });
    let thrown: unknown;
    try { issues.throwIfAny(); } catch (e) { thrown = e; }
    expect(thrown).toBeInstanceOf(GatewayError);
    expect((thrown as GatewayError).status).toBe(400);
    expect((thrown as GatewayError).entryExtensions).toHaveLength(50);
  });
  it('a budget allows exactly its maximum, can be rolled back, and unlimited never refuses', () => {
    const b = new ExpansionBudget(3);
    b.charge(2);
    b.charge(1);
    expect(b.spent).toBe(3);
    expect(() => b.charge(1)).toThrow(GatewayError);
    b.resetTo(1);
    expect(b.spent).toBe(1);
    expect(() => b.charge(2)).not.toThrow();
    const u = unlimited();
    u.charge(1e12);
    expect(u.spent).toBe(1e12);
  });
});

describe('AST constructors', () => {
  it('keys, optional functions, frozen copies', () => {
    expect(FieldRef.key(FieldRef.create(['date_created'], 'year'))).toBe('date_created_year');
    expect(FieldRef.key(FieldRef.create(['project', 'title']))).toBe('project.title');
    expect('fn' in FieldRef.create(['x'])).toBe(false);
    expect('fn' in Select.create(['x'])).toBe(false);
    expect(Select.create(['at'], 'day')).toEqual({ kind: 'Select', path: ['at'], fn: 'day' });
    expect(Select.count('tags')).toEqual({ kind: 'Select', path: ['tags'], count: true });
    const list = ['a', 'b'];
    const c = Compare.create(FieldRef.create(['x']), '_in', list);
    list.push('c');
    expect(c.value).toEqual(['a', 'b']);
    expect(Object.isFrozen(c.value)).toBe(true);
    const path = ['a'];
    const f = FieldRef.create(path);
    path.push('b');
    expect(f.path).toEqual(['a']);
    expect(Object.isFrozen(f.path)).toBe(true);
    const q = parseQuery({}, schemas.render!, ctx());
    const q2 = Query.with(q, { limit: 5 });
    expect(q2.limit).toBe(5);
    expect(q.limit).toBe(100);
    expect(Object.isFrozen(q2)).toBe(true);
  });
});
