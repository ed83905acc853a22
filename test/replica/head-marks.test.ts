import { describe, expect, it } from 'vitest';
import { HeadMarks } from '../../src/replica/team/head-marks.js';

/** A project's activity (src/replica/team/head-marks.ts): the newest created_at of a render held in it, against a window. */
describe('HeadMarks: project activity', () => {
  const now = 1_800_000_000_000;

  it('a project is active while a render created in it is younger than the window; the first to turn quiet says when', () => {
    const m = new HeadMarks();
    m.created('a', now - 10_000);
    m.created('b', now - 59_999);
    m.created('c', now - 60_000);
    m.created('a', now - 50_000); // an older render does not move the activity back
    const { ids, until } = m.active(['a', 'b', 'c', 'd'], now, 60_000);
    expect([...ids].sort()).toEqual(['a', 'b']);
    expect(until).toBe(now + 1);
    expect(m.active(['a', 'b'], until, 60_000).ids).toEqual(new Set(['a']));
    expect(m.active(['c', 'd'], now, 60_000)).toEqual({ ids: new Set(), until: Infinity });
  });

  it('reads v1 timestamps in seconds as well as milliseconds, and forgets a dropped project', () => {
    const m = new HeadMarks();
    m.created('s', Math.floor((now - 5_000) / 1000));
    expect(m.active(['s'], now, 60_000).ids).toEqual(new Set(['s']));
    m.set('s', 123);
    m.drop('s');
    expect(m.active(['s'], now, 60_000).ids.size).toBe(0);
    expect(m.get('s', () => null)).toBeNull();
  });
});
