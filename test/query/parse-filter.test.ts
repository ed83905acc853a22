import { describe, expect, it } from 'vitest';
import { And, Compare, FieldRef, Or, Relation, type FilterNode } from '../../src/query/ast.js';
import { Issues } from '../../src/query/issues.js';
import { fieldOf, parseFilter, splitFunction } from '../../src/query/parse-filter.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { NOW, ROLE, USER, schemas } from './fixtures.js';
import { P1, item, shop } from './shop-fixtures.js';

const world = { ...schemas, ...shop };
const render = schemas.render!;
const project = schemas.project!;

/** The filter node and every problem recorded while parsing it. */
const parse = (raw: unknown, resource: ResourceSchema = render, maxRelationalDepth?: number) => {
  const issues = new Issues();
  const node = parseFilter(raw, resource, {
    schemas: world, issues, dynamic: { now: NOW, userId: USER, roleId: ROLE, user: { id: USER, email: 'me@x.io' } },
    ...(maxRelationalDepth !== undefined ? { maxRelationalDepth } : {}),
  });
  return { node, issues: issues.list };
};
/** The node of a filter that must parse cleanly. */
const ok = (raw: unknown, resource: ResourceSchema = render): FilterNode | null => {
  const { node, issues } = parse(raw, resource);
  expect(issues).toEqual([]);
  return node;
};
/** The problems of a filter that must not parse. */
const bad = (raw: unknown, resource: ResourceSchema = render) => parse(raw, resource).issues;
const c = (path: string, op: string, value: unknown, fn?: string) => Compare.create(FieldRef.create(path.split('.'), fn as never), op as never, value as never);

describe('empty and malformed filters', () => {
  it.each([undefined, null, '', '{}', {}])('%j is no filter', (raw) => {
    expect(ok(raw)).toBeNull();
  });
  // Directus 10.10's words for each (measured with the oracle, 2026-11-28): a bare value is an `_eq` at the root
  it.each(['"status"', '5', 'true', 'abc', '{"status":', '{bad', 5, true])('%s is a bare value: "_eq" is no field', (raw) => {
    expect(bad(raw)).toEqual([{ path: 'filter', reason: 'Invalid filter key "_eq" on "renders"' }]);
  });
  it.each(['[1]', '[1,2]', ['1']])('%j is an array: "0" is no field', (raw) => {
    expect(bad(raw)).toEqual([{ path: 'filter', reason: 'Invalid filter key "0" on "renders"' }]);
  });
  it('null in JSON is not an object; an empty array is no filter', () => {
    expect(bad('null')).toEqual([{ path: 'filter', reason: '"filter" must be of type object' }]);
    expect(ok('[]')).toBeNull();
    expect(ok([])).toBeNull();
  });
  it('the JSON and the object form give the same node', () => {
    expect(ok('{"status":{"_eq":"complete"}}')).toEqual(c('status', '_eq', 'complete'));
    expect(ok({ status: { _eq: 'complete' } })).toEqual(c('status', '_eq', 'complete'));
  });
});

describe('normalisation (Directus parse-filter)', () => {
  it('a bare value is _eq; several keys are _and; a single child is not wrapped', () => {
    expect(ok({ status: 'done' })).toEqual(c('status', '_eq', 'done'));
    expect(ok({ status: 'done', title: 'x' })).toEqual(And.create([c('status', '_eq', 'done'), c('title', '_eq', 'x')]));
    expect(ok({ _and: [{}, { status: 'done' }] })).toEqual(c('status', '_eq', 'done'));
    expect(ok({ _and: [{ status: 'a' }, { status: 'b' }, { status: 'c' }] })).toEqual(
      And.create([c('status', '_eq', 'a'), c('status', '_eq', 'b'), c('status', '_eq', 'c')]),
    );
    expect(ok({ _or: [{ status: 'a' }, { status: 'b' }] })).toEqual(Or.create([c('status', '_eq', 'a'), c('status', '_eq', 'b')]));
  });

  it('an _or holding {} matches everything; an empty _or is dropped; an empty _and is no filter', () => {
    expect(ok({ _or: [{}, { status: 'x' }] })).toBeNull();
    expect(ok({ _or: [{ status: 'x' }, {}] })).toBeNull();
    expect(ok({ _or: [], status: 'x' })).toEqual(c('status', '_eq', 'x'));
    expect(ok({ _and: [] })).toBeNull();
    expect(ok({ _and: [], status: 'x' })).toEqual(c('status', '_eq', 'x'));
  });

  it('"true"/"false"/"null"/"NULL" are keywords for every operator value; other spellings stay strings', () => {
    expect(ok({ download_ready: { _eq: 'true' } })).toEqual(c('download_ready', '_eq', true));
    expect(ok({ download_ready: { _eq: 'false' } })).toEqual(c('download_ready', '_eq', false));
    expect(ok({ status: { _eq: 'null' } })).toEqual(c('status', '_eq', null));
    expect(ok({ status: { _eq: 'NULL' } })).toEqual(c('status', '_eq', null));
    expect(ok({ status: { _eq: 'Null' } })).toEqual(c('status', '_eq', 'Null'));
    expect(ok({ status: { _eq: 'TRUE' } })).toEqual(c('status', '_eq', 'TRUE'));
    expect(ok({ status: { _in: 'null,x' } })).toEqual(c('status', '_in', [null, 'x']));
  });

  it('logical operators under a field are hoisted, also under a relation', () => {
    expect(ok({ status: { _or: [{ _eq: 'a' }, { _eq: 'b' }] } })).toEqual(Or.create([c('status', '_eq', 'a'), c('status', '_eq', 'b')]));
    expect(ok({ status: { _and: [{ _eq: 'a' }, { _neq: 'b' }] } })).toEqual(And.create([c('status', '_eq', 'a'), c('status', '_neq', 'b')]));
    expect(ok({ project: { account: { _or: [{ name: 'a' }, { status: 'b' }] } } })).toEqual(
      Or.create([c('project.account.name', '_eq', 'a'), c('project.account.status', '_eq', 'b')]),
    );
  });

  it('two operators of one field are an _and', () => {
    expect(ok({ date_created: { _gte: '2026-01-01', _lt: '2026-02-01' } })).toEqual(
      And.create([c('date_created', '_gte', '2026-01-01T00:00:00.000Z'), c('date_created', '_lt', '2026-02-01T00:00:00.000Z')]),
    );
  });
});

describe('relations', () => {
  it('many-to-one paths prefix every compared field', () => {
    expect(ok({ project: { title: 'x' } })).toEqual(c('project.title', '_eq', 'x'));
    expect(ok({ project: { account: { name: { _eq: 'x' } } } })).toEqual(c('project.account.name', '_eq', 'x'));
    expect(ok({ project: { 'year(date_created)': { _eq: 2026 } } })).toEqual(c('project.date_created', '_eq', 2026, 'year'));
    expect(ok({ project: { date_created: { _gte: '2026-01-01', _lt: '2026-02-01' } } })).toEqual(
      And.create([c('project.date_created', '_gte', '2026-01-01T00:00:00.000Z'), c('project.date_created', '_lt', '2026-02-01T00:00:00.000Z')]),
    );
    expect(ok({ project: { title: 'x', status: 'y' } })).toEqual(And.create([c('project.title', '_eq', 'x'), c('project.status', '_eq', 'y')]));
    expect(ok({ project: { _eq: P1 } })).toEqual(c('project', '_eq', P1));
  });

  it('a one-to-many field means "some"; _some/_none are explicit; through a many-to-one the path keeps both', () => {
    expect(ok({ renders: { status: 'failed' } }, project)).toEqual(Relation.create(['renders'], 'some', c('status', '_eq', 'failed')));
    expect(ok({ renders: { _some: { status: 'failed' } } }, project)).toEqual(Relation.create(['renders'], 'some', c('status', '_eq', 'failed')));
    expect(ok({ renders: { _none: { status: 'failed' } } }, project)).toEqual(Relation.create(['renders'], 'none', c('status', '_eq', 'failed')));
    expect(ok({ project: { renders: { status: 'failed' } } })).toEqual(Relation.create(['project', 'renders'], 'some', c('status', '_eq', 'failed')));
  });

  it('a relational condition that says nothing is no condition', () => {
    expect(ok({ renders: { title: { _or: [] } } }, project)).toBeNull();
    expect(ok({ project: { title: { _or: [] } } })).toBeNull();
  });

  it('_some/_none only on a top-level one-to-many field, with a filter object', () => {
    expect(bad({ title: { _some: { x: 1 } } })).toEqual([{ path: 'filter.title._some', reason: '"_some" can only be used with top level relational alias field' }]);
    expect(bad({ project: { renders: { _none: { status: 'x' } } } })).toEqual([
      { path: 'filter.project.renders._none', reason: '"_none" can only be used with top level relational alias field' },
    ]);
    expect(bad({ renders: { _some: 'x' } }, project)).toEqual([{ path: 'filter.renders._some', reason: '"_some" has to be a filter object' }]);
    expect(bad({ renders: { _none: ['x'] } }, project)).toEqual([{ path: 'filter.renders._none', reason: '"_none" has to be a filter object' }]);
  });

  it('a key below a plain field is an unknown operator of its type', () => {
    expect(bad({ title: { name: 'x' } })).toEqual([{ path: 'filter.title.name', reason: '"string" field type does not contain the "name" filter operator' }]);
  });

  it('counts every field of a path against MAX_RELATIONAL_DEPTH (default 10)', () => {
    // render.project.renders.project… alternates a many-to-one and a one-to-many; `title` ends the path
    const chain = (fields: number) => {
      let v: unknown = { title: { _eq: 'x' } };
      for (let i = fields - 1; i >= 1; i--) v = { [i % 2 ? 'project' : 'renders']: v };
      return v;
    };
    expect(parse(chain(10)).issues).toEqual([]);
    expect(parse(chain(11)).issues.map((i) => i.reason)).toEqual(['Max relational depth exceeded']);
    expect(parse(chain(3), render, 3).issues).toEqual([]);
    expect(parse(chain(4), render, 3).issues.map((i) => i.reason)).toEqual(['Max relational depth exceeded']);
    expect(parse(chain(2), render, 2).issues).toEqual([]);
    expect(parse(chain(3), render, 2).issues).toEqual([{ path: 'filter.project.renders.title', reason: 'Max relational depth exceeded' }]);
  });
});

describe('nesting bound (64 logical levels)', () => {
  const nest = (levels: number, leaf: unknown) => {
    let v = leaf;
    for (let i = 0; i < levels; i++) v = { _and: [v] };
    return v;
  };
  it('64 levels parse, 65 do not, at the top and under a field', () => {
    expect(parse(nest(64, { status: 'x' })).issues).toEqual([]);
    expect(parse(nest(64, { status: 'x' })).node).toEqual(c('status', '_eq', 'x'));
    expect(parse(nest(65, { status: 'x' })).issues.map((i) => i.reason)).toEqual(['Filter is nested too deeply']);
    expect(parse({ status: nest(64, { _eq: 'x' }) }).issues).toEqual([]);
    expect(parse({ status: nest(65, { _eq: 'x' }) }).issues.map((i) => i.reason)).toEqual(['Filter is nested too deeply']);
  });
});

describe('logical operator values', () => {
  it('need an array (or qs numeric-key object) of filter objects', () => {
    expect(bad({ _or: 'x' })).toEqual([{ path: 'filter._or', reason: '"_or" has to be an array of filter objects' }]);
    expect(bad({ _and: [{ status: 'a' }, 'x'] })).toEqual([{ path: 'filter._and[1]', reason: 'Every item of "_and" has to be a filter object' }]);
    expect(bad({ _or: [null] })).toEqual([{ path: 'filter._or[0]', reason: 'Every item of "_or" has to be a filter object' }]);
    expect(ok({ _or: { 0: { status: 'a' }, 1: { status: 'b' } } })).toEqual(Or.create([c('status', '_eq', 'a'), c('status', '_eq', 'b')]));
    expect(bad({ _or: { 0: { status: 'a' }, x: { status: 'b' } } })).toEqual([{ path: 'filter._or', reason: '"_or" has to be an array of filter objects' }]);
    expect(bad({ status: { _or: 'x' } })).toEqual([{ path: 'filter.status._or', reason: '"_or" has to be an array of filter objects' }]);
  });
});

describe('keys and functions', () => {
  it('splits a function key', () => {
    expect(splitFunction('year(date_created)')).toEqual({ fn: 'year', field: 'date_created' });
    expect(splitFunction('date_created')).toEqual({ field: 'date_created' });
    expect(splitFunction('foo(bar)')).toEqual({ field: 'bar', badFn: 'foo' });
    expect(splitFunction(' year(date_created)')).toEqual({ field: ' year(date_created)' });
    expect(splitFunction('year(date_created) ')).toEqual({ field: 'year(date_created) ' });
    expect(splitFunction('year(a(b))')).toEqual({ field: 'year(a(b))' });
    expect(splitFunction('year()')).toEqual({ field: 'year()' });
  });

  it('knows only own fields', () => {
    expect(fieldOf(render, 'title')?.type).toBe('string');
    expect(fieldOf(render, 'toString')).toBeUndefined();
    expect(bad({ constructor: { _eq: 'x' } })).toEqual([{ path: 'filter.constructor', reason: 'Invalid filter key "constructor" on "renders"' }]);
  });

  it('date functions only on dates, count() only on one-to-many fields', () => {
    expect(bad({ 'year(title)': { _eq: 1 } })).toEqual([{ path: 'filter.year(title)', reason: 'Function "year" needs a date field, not "title"' }]);
    expect(bad({ 'count(project)': { _gt: 1 } })).toEqual([{ path: 'filter.count(project)', reason: 'count() needs a one-to-many field, not "project"' }]);
    expect(ok({ 'count(renders)': { _gt: '3' } }, project)).toEqual(c('renders', '_gt', 3, 'count'));
    expect(bad({ 'year(date_created)': { _contains: '1' } })).toEqual([
      { path: 'filter.year(date_created)._contains', reason: '"integer" field type does not contain the "_contains" filter operator' },
    ]);
    expect(bad({ 'year(date_created)': { _regex: '1' } })).toEqual([
      { path: 'filter.year(date_created)._regex', reason: '"integer" field type does not contain the "_regex" filter operator' },
    ]);
    expect(bad({ 'year(date_created)': 'x' })).toEqual([{ path: 'filter.year(date_created)', reason: 'The filter value for "_eq" on "date_created" has to be a number' }]);
  });

  it('an array where operators are expected is refused', () => {
    expect(bad({ status: ['a'] })).toEqual([{ path: 'filter.status', reason: 'The filter value for "status" has to be an object of operators' }]);
  });
});

describe('operator values', () => {
  it('flags take booleans, "true"/"false", or the bare flag', () => {
    expect(ok({ title: { _null: '' } })).toEqual(c('title', '_null', true));
    expect(ok({ title: { _nnull: 'false' } })).toEqual(c('title', '_nnull', false));
    expect(ok({ title: { _empty: false } })).toEqual(c('title', '_empty', false));
    expect(bad({ title: { _nempty: 1 } })).toEqual([{ path: 'filter.title._nempty', reason: '"_nempty" has to be a boolean' }]);
    expect(bad({ title: { _null: 'null' } })).toEqual([{ path: 'filter.title._null', reason: '"_null" has to be a boolean' }]);
  });

  it('lists: arrays, qs objects in index order, JSON arrays, comma strings, single values', () => {
    expect(ok({ status: { _in: ['a', 'b'] } })).toEqual(c('status', '_in', ['a', 'b']));
    expect(ok({ status: { _in: { 0: 'a', 2: 'c', 10: 'k', 1: 'b' } } })).toEqual(c('status', '_in', ['a', 'b', 'c', 'k']));
    expect(ok({ status: { _in: { 10: 'k', '02': 'c' } } })).toEqual(c('status', '_in', ['c', 'k'])); // by index, even written 02
    expect(ok({ status: { _in: true } })).toEqual(c('status', '_in', ['true']));
    expect(ok({ status: { _in: '  ["a","b,c",null]' } })).toEqual(c('status', '_in', ['a', 'b,c', null]));
    expect(ok({ status: { _in: '[a,b' } })).toEqual(c('status', '_in', ['[a', 'b']));
    expect(ok({ status: { _in: '[{"a":1}]' } })).toEqual(c('status', '_in', ['[{"a":1}]']));
    expect(ok({ status: { _in: '{"a":1}' } })).toEqual(c('status', '_in', ['{"a":1}']));
    expect(ok({ status: { _nin: 'a,b' } })).toEqual(c('status', '_nin', ['a', 'b']));
    expect(ok({ n: { _in: 5 } }, item)).toEqual(c('n', '_in', [5]));
    expect(ok({ n: { _between: '1,5' } }, item)).toEqual(c('n', '_between', [1, 5]));
    expect(ok({ n: { _nbetween: [1, '5'] } }, item)).toEqual(c('n', '_nbetween', [1, 5]));
  });

  it('lists must hold values (two for _between), each valid', () => {
    expect(bad({ status: { _in: { a: 'x' } } })).toEqual([{ path: 'filter.status._in', reason: '"_in" has to be an array of values' }]);
    expect(bad({ status: { _in: { '1a': 'x' } } })).toEqual([{ path: 'filter.status._in', reason: '"_in" has to be an array of values' }]);
    expect(bad({ status: { _in: { a1: 'x' } } })).toEqual([{ path: 'filter.status._in', reason: '"_in" has to be an array of values' }]);
    expect(bad({ status: { _in: undefined } })).toEqual([{ path: 'filter.status._in', reason: '"_in" has to be an array of values' }]);
    expect(bad({ status: { _nin: null } })).toEqual([{ path: 'filter.status._nin', reason: '"_nin" has to be an array of values' }]);
    expect(bad({ status: { _nin: [] } })).toEqual([{ path: 'filter.status._nin', reason: '"_nin" has to be an array of values' }]);
    expect(bad({ n: { _between: [1, 2, 3] } }, item)).toEqual([{ path: 'filter.n._between', reason: '"_between" has to be an array of exactly two values' }]);
    expect(bad({ n: { _nbetween: '1' } }, item)).toEqual([{ path: 'filter.n._nbetween', reason: '"_nbetween" has to be an array of exactly two values' }]);
    expect(bad({ n: { _in: [1, 'x'] } }, item)).toEqual([{ path: 'filter.n._in[1]', reason: 'The filter value for "_in" on "n" has to be a number' }]);
    expect(bad({ status: { _in: ['a', ''] } })).toEqual([
      { path: 'filter.status._in[1]', reason: `You can't filter for an empty string in "_in". Use "_empty" or "_nempty" instead` },
    ]);
  });

  it('numbers: strings and booleans become numbers; anything else is refused', () => {
    expect(ok({ n: { _eq: '7' } }, item)).toEqual(c('n', '_eq', 7));
    expect(ok({ x: { _lt: '-1.5' } }, item)).toEqual(c('x', '_lt', -1.5));
    expect(ok({ n: { _eq: true } }, item)).toEqual(c('n', '_eq', 1));
    expect(ok({ n: { _eq: 'false' } }, item)).toEqual(c('n', '_eq', 0));
    expect(bad({ n: { _eq: 'seven' } }, item)).toEqual([{ path: 'filter.n._eq', reason: 'The filter value for "_eq" on "n" has to be a number' }]);
    expect(bad({ n: { _eq: 'Infinity' } }, item)).toEqual([{ path: 'filter.n._eq', reason: 'The filter value for "_eq" on "n" has to be a number' }]);
  });

  it('timestamps: parsed and normalised to ISO; _contains keeps the text', () => {
    expect(ok({ date_created: { _eq: '2026-01-02T03:04:05+01:00' } })).toEqual(c('date_created', '_eq', '2026-01-02T02:04:05.000Z'));
    expect(ok({ date_created: { _contains: 2026 } })).toEqual(c('date_created', '_contains', '2026'));
    expect(ok({ date_created: { _ncontains: '01-02' } })).toEqual(c('date_created', '_ncontains', '01-02'));
    expect(bad({ date_created: { _eq: 2026 } })).toEqual([{ path: 'filter.date_created._eq', reason: 'Invalid DateTime format in field "date_created"' }]);
    expect(ok({ date_created: { _lt: '$NOW' } })).toEqual(c('date_created', '_lt', NOW.toISOString()));
    expect(ok({ date_created: { _gt: '$NOW(-1 day)' } })).toEqual(c('date_created', '_gt', '2026-06-14T12:00:00.000Z'));
  });

  it('uuids: checked and lower-cased; booleans: true/false, 1/0', () => {
    expect(ok({ project: { _eq: P1.toUpperCase() } })).toEqual(c('project', '_eq', P1));
    expect(ok({ user_created: { _eq: '$CURRENT_USER' } })).toEqual(c('user_created', '_eq', USER));
    expect(bad({ project: { _eq: 5 } })).toEqual([{ path: 'filter.project._eq', reason: 'The filter value for "_eq" on "project" has to be a uuid' }]);
    expect(ok({ download_ready: { _eq: 1 } })).toEqual(c('download_ready', '_eq', true));
    expect(ok({ download_ready: { _eq: '1' } })).toEqual(c('download_ready', '_eq', true));
    expect(ok({ download_ready: { _neq: 0 } })).toEqual(c('download_ready', '_neq', false));
    expect(ok({ download_ready: { _neq: '0' } })).toEqual(c('download_ready', '_neq', false));
    expect(bad({ download_ready: { _eq: 2 } })).toEqual([{ path: 'filter.download_ready._eq', reason: 'The filter value for "_eq" on "download_ready" has to be a boolean' }]);
  });

  it('strings: numbers and booleans are compared as text', () => {
    expect(ok({ title: { _eq: 5 } })).toEqual(c('title', '_eq', '5'));
    expect(ok({ title: { _contains: true } })).toEqual(c('title', '_contains', 'true'));
    expect(ok({ title: { _eq: '$CURRENT_USER.email' } })).toEqual(c('title', '_eq', 'me@x.io'));
    expect(ok({ title: { _eq: '$CURRENT_USER.nope' } })).toEqual(c('title', '_eq', null));
  });

  it('objects, arrays and unresolvable variables are refused; the first problem of a list stops it', () => {
    expect(bad({ title: { _eq: { a: 1 } } })).toEqual([{ path: 'filter.title._eq', reason: 'The filter value for "_eq" has to be a string, number, or boolean' }]);
    expect(bad({ title: { _eq: undefined } })).toEqual([{ path: 'filter.title._eq', reason: 'The filter value for "_eq" has to be a string, number, or boolean' }]);
    expect(bad({ title: { _eq: ['a'] } })).toEqual([{ path: 'filter.title._eq', reason: 'The filter value for "_eq" has to be a string, number, or boolean' }]);
    expect(bad({ title: { _eq: '$NOW(soon)' } })[0]!.reason).toMatch(/^Invalid \$NOW adjustment "soon"/);
    expect(bad({ status: { _in: ['', ''] } })).toHaveLength(1);
  });

  it('operators not allowed for the type are named with the type', () => {
    expect(bad({ download_ready: { _gt: true } })).toEqual([{ path: 'filter.download_ready._gt', reason: '"boolean" field type does not contain the "_gt" filter operator' }]);
    expect(bad({ data: { _eq: 'x' } })).toEqual([{ path: 'filter.data._eq', reason: '"json" field type does not contain the "_eq" filter operator' }]);
    expect(bad({ project: { _contains: 'x' } })).toEqual([{ path: 'filter.project._contains', reason: '"uuid" field type does not contain the "_contains" filter operator' }]);
  });

  it('every problem is listed', () => {
    expect(bad({ nope: 1, title: { _gt: 'a' }, status: { _eq: '' } }).map((i) => i.path)).toEqual(['filter.nope', 'filter.title._gt', 'filter.status._eq']);
  });
});
