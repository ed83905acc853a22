import { describe, expect, it } from 'vitest';
import { diffAnswers, noisePaths, uuidsIn, type DiffOptions } from '../../src/compare/diff.js';

const A = '11111111-1111-4111-8111-111111111111'; // legacy uuid of rend_1
const B = '22222222-2222-5222-8222-222222222222'; // gateway uuid of rend_1
const C = '33333333-3333-4333-8333-333333333333'; // rend_2
const ids: Record<string, string> = { [A]: 'v1:rend_1', [B]: 'v1:rend_1', [C]: 'v1:rend_2' };
const opts = (o: Partial<DiffOptions> = {}): DiffOptions => ({
  rules: { ignoredPaths: ['data[].process_id'], timestampToleranceMs: 1000, signedUrlsWithoutQuery: true, unorderedArraysWithoutSort: true, noiseRepeat: true },
  unordered: false, identity: (s) => ids[s], ...o,
});
const d = (l: unknown, t: unknown, o?: Partial<DiffOptions>) => diffAnswers({ status: 200, body: l }, { status: 200, body: t }, opts(o)).map(({ path, kind }) => `${kind} ${path}`);

describe('diff engine', () => {
  it('identical data → zero differences; different uuids naming the same v1 object are equal', () => {
    expect(d({ data: [{ id: A, title: 'x' }] }, { data: [{ id: B, title: 'x' }] })).toEqual([]);
    expect(d({ data: [{ id: A }] }, { data: [{ id: C }] })).toEqual(['value data[].id']);
  });
  it('finds each kind of difference on its dotted path', () => {
    expect(d({ data: { a: 1, b: 2 } }, { data: { a: 1, c: 2 } })).toEqual(['missing data.b', 'extra data.c']);
    expect(d({ data: { a: 1 } }, { data: { a: '1' } })).toEqual(['type data.a']);
    expect(d({ data: { a: 1 } }, { data: { a: 2 } })).toEqual(['value data.a']);
    expect(d({ data: [1, 2, 3] }, { data: [1, 2] })).toEqual(['length data']);
    expect(d({ data: [{ id: A }, { id: C }] }, { data: [{ id: C }, { id: B }] })).toEqual(['order data']);
    expect(diffAnswers({ status: 200, body: {} }, { status: 403, body: {} }, opts()).map((x) => x.kind)).toEqual(['status']);
  });
  it('normalises timestamps within tolerance, signed URLs without query, ignored paths', () => {
    expect(d({ t: '2026-01-01T00:00:00.000Z' }, { t: '2026-01-01T00:00:00.800Z' })).toEqual([]);
    expect(d({ t: '2026-01-01T00:00:00.000Z' }, { t: '2026-01-01T00:00:05.000Z' })).toEqual(['value t']);
    expect(d({ u: 'https://cdn/x.mp4?sig=1' }, { u: 'https://cdn/x.mp4?sig=2' })).toEqual([]);
    expect(d({ data: [{ id: A, process_id: 'p1' }] }, { data: [{ id: B, process_id: 'p2' }] })).toEqual([]);
  });
  it('compares arrays as multisets when the request had no sort', () => {
    expect(d({ data: [{ id: A }, { id: C }] }, { data: [{ id: C }, { id: B }] }, { unordered: true })).toEqual([]);
    expect(d({ data: [{ id: A, title: 'x' }] }, { data: [{ id: B, title: 'y' }] }, { unordered: true })).toEqual(['value data[].title']);
    expect(d({ data: [{ id: A }] }, { data: [] }, { unordered: true })).toEqual(['missing data[]']);
  });
  it('detects noise from two legacy answers', () => {
    expect([...noisePaths({ status: 200, body: { a: 1, now: 'x' } }, { status: 200, body: { a: 1, now: 'y' } }, opts())]).toEqual(['now']);
  });
  it('collects uuids', () => expect([...uuidsIn({ a: [A, { b: C.toUpperCase() }], c: 'x' })]).toEqual([A, C]));
});
