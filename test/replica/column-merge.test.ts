import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Comparator, Rec, SortKey } from '../../src/query/compile.js';
import { merged, type Run } from '../../src/replica/team/column-scan.js';

/**
 * The merge of several teams' kept orders (`merged`) against the plain answer: every team's records, already in order,
 * sorted together by value, ties to the earlier team — from 1 to 6 teams, heavy ties, empty teams, any count asked.
 */
const byValue: Comparator = Object.assign((a: Rec, b: Rec) => (a.v as number) - (b.v as number), {
  keyOf: (r: Rec): SortKey => ({ rec: r, values: [] }),
  byKeys: (a: SortKey, b: SortKey) => {
    for (const k of [a, b]) if (k.values.length === 0) k.values.push(k.rec.v);
    return (a.values[0] as number) - (b.values[0] as number);
  },
});

function runsOf(teams: readonly (readonly number[])[]): Run[] {
  return teams.map((values, k) => {
    const recs = [...values].sort((a, b) => a - b).map((v, i) => ({ v, team: k, i }));
    let at = 0;
    const next = () => recs[at++];
    return { next, head: next(), k };
  });
}

describe('merged: the kept orders of several teams, merged', () => {
  it('gives the first n records of all the teams in order, ties to the earlier team', () => {
    fc.assert(fc.property(
      fc.array(fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 12 }), { minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 80 }),
      (teams, n) => {
        const all = runsOf(teams).flatMap((r) => {
          const out: Rec[] = [];
          for (let x = r.head; x; x = r.next()) out.push(x);
          return out;
        });
        const expected = all.sort((a, b) => (a.v as number) - (b.v as number) || (a.team as number) - (b.team as number) || (a.i as number) - (b.i as number)).slice(0, n);
        expect(merged(runsOf(teams), byValue, n)).toEqual(expected);
      },
    ), { numRuns: 3_000 });
  });
});
