import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/catalog.js';
import { adjustDate } from '../../src/query/dynamic.js';
import { parseQuery } from '../../src/query/parse-query.js';
import { parseQueryString } from '../../src/query/querystring.js';
import { runQuery } from '../../src/query/run.js';
import { ctx, lookup, renders, schemas, NOW } from './fixtures.js';

const problems = (raw: Record<string, unknown>, resource = 'render'): { path: string; reason: string }[] => {
  try {
    parseQuery(raw, schemas[resource]!, ctx());
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    const ge = e as GatewayError;
    expect(ge.code).toBe('INVALID_QUERY');
    expect(ge.status).toBe(400);
    return (ge.entryExtensions ?? []) as { path: string; reason: string }[];
  }
  return [];
};

describe('invalid queries: 400 INVALID_QUERY listing every problem with its path', () => {
  it.each([
    [{ limit: 'abc' }, 'limit', '"limit" must be a number'],
    [{ limit: '1.5' }, 'limit', '"limit" must be an integer'],
    [{ limit: '-2' }, 'limit', '"limit" must be greater than or equal to -1'],
    [{ page: '-1' }, 'page', '"page" must be greater than or equal to 0'],
    [{ page: 'x' }, 'page', '"page" must be a number'],
    [{ offset: '-1' }, 'offset', '"offset" must be greater than or equal to 0'],
    [{ meta: 'foo' }, 'meta[0]', '"meta[0]" must be one of [total_count, filter_count]'],
    [{ filter: '{bad' }, 'filter', 'Invalid filter key "_eq" on "renders"'],
    [{ filter: '[1]' }, 'filter', 'Invalid filter key "0" on "renders"'],
    [{ filter: { nope: { _eq: 1 } } }, 'filter.nope', 'Invalid filter key "nope" on "renders"'],
    [{ filter: { title: { _gt: 'a' } } }, 'filter.title._gt', '"string" field type does not contain the "_gt" filter operator'],
    [{ filter: { title: { _foo: 'a' } } }, 'filter.title._foo', '"string" field type does not contain the "_foo" filter operator'],
    [{ filter: { status: { _contains: {} } } }, 'filter.status._contains', 'The filter value for "_contains" has to be a string, number, or boolean'],
    [{ filter: { status: { _eq: '' } } }, 'filter.status._eq', `You can't filter for an empty string in "_eq". Use "_empty" or "_nempty" instead`],
    [{ filter: { title: { _in: [] } } }, 'filter.title._in', '"_in" has to be an array of values'],
    [{ filter: { date_created: { _between: ['2026-01-01'] } } }, 'filter.date_created._between', '"_between" has to be an array of exactly two values'],
    [{ filter: { title: { _null: 'maybe' } } }, 'filter.title._null', '"_null" has to be a boolean'],
    [{ filter: { date_created: { _gt: '$NOW(1 month ago)' } } }, 'filter.date_created._gt', 'Invalid $NOW adjustment "1 month ago": use a sign, a number and a unit such as "-30 days" (send + as %2B)'],
    [{ filter: { date_created: { _gt: 'yesterday' } } }, 'filter.date_created._gt', 'Invalid DateTime format in field "date_created"'],
    [{ filter: { project: { _eq: 'not-a-uuid' } } }, 'filter.project._eq', 'The filter value for "_eq" on "project" has to be a uuid'],
    [{ filter: { download_ready: { _eq: 'perhaps' } } }, 'filter.download_ready._eq', 'The filter value for "_eq" on "download_ready" has to be a boolean'],
    [{ filter: { project: { _some: { title: { _eq: 'x' } } } } }, 'filter.project._some', '"_some" can only be used with top level relational alias field'],
    [{ filter: { 'foo(date_created)': { _eq: 1 } } }, 'filter.foo(date_created)', 'Invalid function specified "foo"'],
    [{ filter: { _and: 'x' } }, 'filter._and', '"_and" has to be an array of filter objects'],
    [{ fields: 'title.nope' }, 'fields[0]', '"title" is not a relational field'],
    [{ sort: 'nope' }, 'sort[0]', 'Field "nope" does not exist on "renders"'],
    [{ aggregate: { median: 'x' } }, 'aggregate.median', 'Invalid aggregate function "median"'],
    [{ aggregate: { sum: 'title' } }, 'aggregate.sum', '"sum" needs a numeric field, and "title" is string'],
    [{ aggregate: '{bad' }, 'aggregate', 'Invalid JSON for aggregate object'],
    [{ groupBy: 'nope' }, 'groupBy[0]', 'Field "nope" does not exist on "renders"'],
    [{ search: { a: 1 } }, 'search', '"search" must be a string'],
  ] as const)('%j', (raw, path, reason) => {
    expect(problems(raw as Record<string, unknown>)).toContainEqual({ path, reason });
  });

  it('lists every problem at once', () => {
    const got = problems({ limit: 'x', meta: 'foo', filter: { nope: 1, title: { _gt: 2 } } });
    expect(got.map((p) => p.path)).toEqual(['filter.nope', 'filter.title._gt', 'limit', 'meta[0]']);
  });

  it('accepts the bare _null flag and "true"/"false"/"null" strings', () => {
    expect(problems(parseQueryString('filter[title][_null]&filter[download_ready][_eq]=true&filter[date_updated][_eq]=null'))).toEqual([]);
  });
});

describe('$NOW adjustments: every Directus unit, default days', () => {
  const base = NOW.getTime();
  it.each([
    ['-1 ms', -1], ['+5 msec', 5], ['2 msecs', 2], ['3 millisecond', 3], ['4 milliseconds', 4],
    ['1 s', 1000], ['1 sec', 1000], ['2 secs', 2000], ['1 second', 1000], ['-2 seconds', -2000],
    ['1 m', 60_000], ['1 min', 60_000], ['2 mins', 120_000], ['1 minute', 60_000], ['-30 minutes', -1_800_000],
    ['1 h', 3_600_000], ['1 hr', 3_600_000], ['2 hrs', 7_200_000], ['1 hour', 3_600_000], ['+2 hours', 7_200_000],
    ['1 d', 86_400_000], ['1 day', 86_400_000], ['-30 days', -30 * 86_400_000], ['7', 7 * 86_400_000], ['1.5', 1.5 * 86_400_000],
    ['1 w', 604_800_000], ['1 week', 604_800_000], ['-2 weeks', -1_209_600_000],
    ['1 HOUR', 3_600_000], ['1day', 86_400_000],
  ])('$NOW(%s)', (adj, deltaMs) => {
    expect(adjustDate(NOW, adj)!.getTime() - base).toBe(deltaMs);
  });
  it.each([
    ['1 mo', '2026-07-15T12:00:00.000Z'], ['1 mth', '2026-07-15T12:00:00.000Z'], ['-1 month', '2026-05-15T12:00:00.000Z'], ['3 months', '2026-09-15T12:00:00.000Z'],
    ['1 y', '2027-06-15T12:00:00.000Z'], ['-1 yr', '2025-06-15T12:00:00.000Z'], ['2 yrs', '2028-06-15T12:00:00.000Z'], ['1 year', '2027-06-15T12:00:00.000Z'], ['-1 years', '2025-06-15T12:00:00.000Z'],
  ])('$NOW(%s) uses calendar months', (adj, iso) => {
    expect(adjustDate(NOW, adj)!.toISOString()).toBe(iso);
  });
  it('clamps the day of month like date-fns', () => {
    expect(adjustDate(new Date('2026-01-31T00:00:00Z'), '1 month')!.toISOString()).toBe('2026-02-28T00:00:00.000Z');
  });
  it.each(['1 month ago', 'soon', '', '1 fortnight', '--1 day'])('rejects "%s"', (adj) => {
    expect(adjustDate(NOW, adj)).toBeUndefined();
  });
});

/** Arbitrary nested JSON-ish values, including hostile keys. */
const nasty = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant('$NOW(-1 fortnight)'), fc.constant('$CURRENT_USER'),
    fc.constantFrom('_eq', '_in', '_and', '_or', '_some', '__proto__', 'constructor', 'title', 'project', 'renders', 'status', 'date_created', 'year(date_created)', '*', '*.*'),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('_and', '_or', '_eq', '_in', '_between', '_null', '_some', '_none', 'title', 'project', 'account', 'status', 'renders', '__proto__', 'constructor', 'toString', 'year(date_created)')), tie('value'), { maxKeys: 4 }),
  ),
})).value;

const PARAMS = ['fields', 'filter', 'search', 'sort', 'limit', 'offset', 'page', 'meta', 'aggregate', 'groupBy'];

describe('no input produces anything but a result or a 400', () => {
  it('holds for 10 000 arbitrary strings and structures at every parameter', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('render', 'project', 'account', 'template', 'user'),
        fc.dictionary(fc.constantFrom(...PARAMS), fc.oneof(nasty, fc.string(), fc.json(), fc.string().map((s) => `filter[${s}]=${s}`)), { maxKeys: 5 }),
        (resource, raw) => {
          try {
            const q = parseQuery(raw, schemas[resource]!, ctx());
            const res = runQuery(resource === 'render' ? renders : [], q, schemas, lookup, { numericStrings: true });
            expect(Array.isArray(res.data)).toBe(true);
          } catch (e) {
            if (!(e instanceof GatewayError) || e.status !== 400) throw e;
          }
        },
      ),
      { numRuns: 10_000 },
    );
  });

  it('holds for arbitrary query strings through the bracket parser', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...PARAMS.map((p) => `${p}`), 'filter[title]', 'filter[_or][0][status]', 'filter[project][title][_in][]', 'aggregate[count]', 'fields[]'), fc.string()), { maxLength: 6 }), (pairs) => {
        const qs = pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
        try {
          parseQuery(parseQueryString(qs), schemas.render!, ctx());
        } catch (e) {
          if (!(e instanceof GatewayError) || e.status !== 400) throw e;
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('nesting limits hold wherever _and/_or can appear', () => {
  const nest = (depth: number, leaf: unknown, op: '_and' | '_or' = '_and'): unknown => {
    let v: unknown = leaf;
    for (let i = 0; i < depth; i++) v = { [op]: [v] };
    return v;
  };
  const forms: [string, (d: number) => unknown][] = [
    ['top level', (d) => nest(d, { title: { _eq: 'x' } })],
    ['under a field', (d) => ({ title: nest(d, { _eq: 'x' }) })],
    ['under a field, _or', (d) => ({ title: nest(d, { _eq: 'x' }, '_or') })],
    ['under a many-to-one relation', (d) => ({ project: { title: nest(d, { _eq: 'x' }) } })],
    ['under _some of a one-to-many relation', (d) => ({ project: { renders: { _some: nest(d, { title: { _eq: 'x' } }) } } })],
    ['relation inside logical inside field', (d) => ({ project: nest(d, { title: { _eq: 'x' } }) })],
  ];
  it.each(forms)('%s: 1 100 levels is a 400 naming the depth, never a stack overflow', (_name, build) => {
    for (const asJson of [true, false]) {
      const filter = build(1100);
      let thrown: unknown;
      try { parseQuery({ filter: asJson ? JSON.stringify(filter) : filter }, schemas.render!, ctx()); } catch (e) { thrown = e; }
      expect(thrown).toBeInstanceOf(GatewayError);
      expect((thrown as GatewayError).code).toBe('INVALID_QUERY');
      expect((thrown as GatewayError).messages.join(' ')).toMatch(/nested too deeply|_some|Max relational depth/);
    }
  });
  it.each(forms)('%s: 20 levels still parse', (name, build) => {
    if (name.includes('_some')) return expect(() => parseQuery({ filter: JSON.stringify(build(20)) }, schemas.render!, ctx())).toThrow(GatewayError);
    expect(parseQuery({ filter: JSON.stringify(build(20)) }, schemas.render!, ctx()).filter).not.toBeNull();
  });
});

describe('$NOW adjustments are bounded in length', () => {
  it('refuses a 14 000-digit adjustment without echoing it', () => {
    let thrown: GatewayError | undefined;
    try { parseQuery({ filter: { date_created: { _gt: `$NOW(${'9'.repeat(14_000)}x)` } } }, schemas.render!, ctx()); } catch (e) { thrown = e as GatewayError; }
    expect(thrown?.code).toBe('INVALID_QUERY');
    expect(thrown!.messages.join('')).toContain('longer than 48 characters');
    expect(thrown!.messages.join('').length).toBeLessThan(300);
  });
  it('reads decimals and surrounding spaces', () => {
    const q = parseQuery({ filter: { date_created: { _gt: '$NOW( -1.5 hours )' } } }, schemas.render!, ctx());
    expect(JSON.stringify(q.filter)).toContain(new Date(NOW.getTime() - 5_400_000).toISOString());
  });
});

describe('_between / _nbetween as a JSON array (Directus accepts both forms)', () => {
  it.each([
    ['bracket, JSON array', { filter: { date_created: { _between: '["2025-01-01","2025-06-30"]' } } }],
    ['bracket, comma list', { filter: { date_created: { _between: '2025-01-01,2025-06-30' } } }],
    ['JSON filter, array', { filter: JSON.stringify({ date_created: { _between: ['2025-01-01', '2025-06-30'] } }) }],
    ['querystring', parseQueryString('filter[date_created][_between]=["2025-01-01","2025-06-30"]')],
  ])('%s', (_name, raw) => {
    const q = parseQuery(raw as Record<string, unknown>, schemas.render!, ctx());
    expect(JSON.stringify(q.filter)).toContain('2025-01-01');
    expect(JSON.stringify(q.filter)).toContain('2025-06-30');
    expect(JSON.stringify(q.filter)).toContain('_between');
  });
  it('_nbetween too, and the same answer either way', () => {
    const a = parseQuery({ filter: { date_created: { _nbetween: '["2025-01-01","2025-06-30"]' } } }, schemas.render!, ctx());
    const b = parseQuery({ filter: { date_created: { _nbetween: '2025-01-01,2025-06-30' } } }, schemas.render!, ctx());
    expect(a.filter).toEqual(b.filter);
  });
});
