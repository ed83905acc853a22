import { describe, expect, it } from 'vitest';
import { headersOf, parseRules, refusalOf, RuleSet, verdictAt, type Rule } from '../../src/deprecate/rules.js';

const base = { deprecation: '2026-01-01T00:00:00Z', sunset: '2026-06-30T00:00:00Z' };
const rules = (...list: Record<string, unknown>[]): Rule[] => {
  const r = parseRules({ rules: list });
  expect(r.problems).toEqual([]);
  return [...r.rules!];
};
const U = 'user:6f1c2a3e-1111-4222-8333-944455556666';

describe('specificity', () => {
  const set = new RuleSet(rules(
    { id: 'all', match: { route: '*', client: '*' }, ...base },
    { id: 'gets', match: { route: 'GET *' }, ...base },
    { id: 'renders-any-method', match: { route: '* /renders' }, ...base },
    { id: 'renders', match: { route: 'GET /renders' }, ...base },
    { id: 'ann-anything', match: { route: '*', client: U }, ...base },
    { id: 'ann-renders', match: { route: 'GET /renders', client: U }, ...base },
    { id: 'ann-python', match: { route: '*', client: `${U}~python-requests` }, ...base },
  ));
  it.each([
    ['GET', '/renders', 'user:someone-else', 'curl', 'renders'],
    ['POST', '/renders', 'user:someone-else', 'curl', 'renders-any-method'],
    ['GET', '/projects', 'user:someone-else', 'curl', 'gets'],
    ['PATCH', '/projects/:id', 'static:tok', 'none', 'all'],
    ['GET', '/renders', U, 'curl', 'ann-renders'],
    ['GET', '/projects', U, 'curl', 'ann-anything'],
    ['GET', '/renders', U, 'python-requests', 'ann-python'],
  ])('%s %s by %s (%s) falls under %s', (method, template, principal, family, id) => {
    expect(set.pick(method, template, principal, family)?.rule.id).toBe(id);
  });

  it('nothing applies when no rule matches', () => {
    const only = new RuleSet(rules({ id: 'renders', match: { route: 'GET /renders', client: 'static:abc' }, ...base }));
    expect(only.pick('GET', '/renders', 'user:x', 'curl')).toBeUndefined();
    expect(only.pick('GET', '/renders', 'static:abc', 'curl')?.rule.id).toBe('renders');
    expect(only.pick('GET', '/renders/:id', 'static:abc', 'curl')).toBeUndefined();
  });
});

describe('headers', () => {
  it('writes Deprecation as @epoch-seconds, Sunset as an IMF-fixdate, Link with both relations', () => {
    const [r] = rules({ id: 'x', match: { route: 'GET /renders' }, deprecation: '2026-11-01T01:02:03+02:00', sunset: '2027-06-30T00:00:00Z', link: 'https://x.example/guide?a=1' });
    expect(r!.deprecation).toBe('2026-10-31T23:02:03Z');
    expect(headersOf(r!)).toEqual({
      deprecation: `@${Date.UTC(2026, 9, 31, 23, 2, 3) / 1000}`,
      sunset: 'Wed, 30 Jun 2027 00:00:00 GMT',
      link: '<https://x.example/guide?a=1>; rel="deprecation"; type="text/html", <https://x.example/guide?a=1>; rel="sunset"; type="text/html"',
    });
    const [plain] = rules({ id: 'y', match: { route: 'GET /renders' }, deprecation: '2026-11-01T00:00:00Z' });
    expect(headersOf(plain!)).toEqual({ deprecation: `@${Date.UTC(2026, 10, 1) / 1000}` });
  });
});

describe('verdicts', () => {
  const [r] = rules({ id: 'x', match: { route: 'GET /renders' }, ...base, brownouts: [{ start: '2026-03-01T14:00:00Z', minutes: 15 }, { start: '2026-02-01T10:00:00Z', minutes: 5 }] });
  const set = new RuleSet([r!]);
  const c = set.compiled[0]!;
  it.each([
    ['2026-02-01T09:59:59Z', 'announced', false],
    ['2026-02-01T10:00:00Z', 'brownout', true],
    ['2026-02-01T10:04:59Z', 'brownout', true],
    ['2026-02-01T10:05:00Z', 'announced', false],
    ['2026-03-01T14:10:00Z', 'brownout', true],
    ['2026-06-29T23:59:59Z', 'announced', false],
    ['2026-06-30T00:00:00Z', 'sunset', true],
  ])('at %s: %s', (at, state, refuse) => {
    const v = verdictAt(c, Date.parse(at));
    expect(v.state).toBe(state);
    expect(v.refuse).toBe(refuse);
  });
  it('observe mode never refuses', () => {
    const [o] = rules({ id: 'o', match: { route: 'GET /renders' }, ...base, mode: 'observe' });
    const v = verdictAt(new RuleSet([o!]).compiled[0]!, Date.parse('2026-07-01T00:00:00Z'));
    expect(v).toMatchObject({ state: 'sunset', refuse: false });
  });
  it('a brownout refusal names the window\'s end, the sunset and tells when to retry', () => {
    const at = Date.parse('2026-03-01T14:10:00Z');
    const out = refusalOf(verdictAt(c, at), 'GET /renders', at);
    expect(out.message).toBe('GET /renders is deprecated and refused during a scheduled brownout until 2026-03-01T14:15:00Z; it will be retired on 2026-06-30T00:00:00Z.');
    expect(out.headers['retry-after']).toBe('300');
  });
});

describe('validation', () => {
  it('names every problem with its path', () => {
    const r = parseRules({ rules: [
      { id: 'a b', match: { route: 'FETCH /x' }, deprecation: '2026-01-01' },
      { id: 'c', match: { route: 'GET /x' }, deprecation: '2026-02-01T00:00:00Z', brownouts: [{ start: '2026-01-01T00:00:00Z', minutes: 5 }] },
    ] });
    expect(r.rules).toBeUndefined();
    expect(r.problems.map((p) => p.path)).toEqual(['rules.0.id', 'rules.0.match.route', 'rules.0.deprecation']);
    const later = parseRules({ rules: [{ id: 'c', match: { route: 'GET /x' }, deprecation: '2026-02-01T00:00:00Z', sunset: '2026-03-01T00:00:00Z',
      brownouts: [{ start: '2026-01-01T00:00:00Z', minutes: 5 }, { start: '2026-03-01T00:00:00Z', minutes: 5 }] }] });
    // a brownout may come before the deprecation date (the headers are sent from the moment the rule is set), not at the sunset
    expect(later.problems.map((p) => p.path)).toEqual(['rules.0.brownouts.1.start']);
  });
  it('reads "* *" as "*": the same match as "*" is refused', () => {
    const [r] = rules({ id: 'a', match: { route: '* *' }, deprecation: '2026-01-01T00:00:00Z' });
    expect(r!.match.route).toBe('*');
    const both = parseRules({ rules: [{ id: 'a', match: { route: '* *' }, deprecation: '2026-01-01T00:00:00Z' },
      { id: 'b', match: { route: '*', client: '*' }, deprecation: '2026-01-01T00:00:00Z' }] });
    expect(both.problems.map((p) => p.path)).toEqual(['rules.1.match']);
  });
  it('bounds the number of rules and brownouts', () => {
    const many = Array.from({ length: 201 }, (_, i) => ({ id: `r${i}`, match: { route: `GET /r${i}` }, deprecation: '2026-01-01T00:00:00Z' }));
    expect(parseRules({ rules: many }).problems[0]?.path).toBe('rules');
    const windows = Array.from({ length: 51 }, () => ({ start: '2026-02-01T00:00:00Z', minutes: 1 }));
    expect(parseRules({ rules: [{ id: 'w', match: { route: 'GET /x' }, deprecation: '2026-01-01T00:00:00Z', brownouts: windows }] }).problems[0]?.path)
      .toBe('rules.0.brownouts');
  });
});
