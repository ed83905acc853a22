import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  budgetIntervalMs, SCHEDULER_TICK_MS, cadenceFrom, fullCallsPerMin, syncCallsFor, syncCallsWith, type FreshnessConfig,
} from '../../src/replica/sync/freshness.js';
import { CYCLE_UNIT_MS, dueMax, headsDue, phaseHash, phasesIn } from '../../src/replica/sync/rotation.js';

/**
 * The rotation of quiet projects (src/replica/sync/rotation.ts) and the cadence it is used with (src/replica/sync/freshness.ts),
 * on simulated time: which projects each sync checks, that every project is checked within the stated bound whatever
 * cycles the syncs used, and that a minute's syncs fit the budget the cadence was computed for.
 */
const ids = (n: number, salt: number) => Array.from({ length: n }, (_, i) => `proj_${salt.toString(36)}${i.toString(36)}q${(i * 7919 + salt) % 997}`);
const ladder = (j: number) => CYCLE_UNIT_MS * 2 ** j;

describe('dueMax', () => {
  it('is the most due times any window holds (every window of a small cycle counted one by one)', () => {
    fc.assert(fc.property(
      fc.array(fc.nat({ max: 2 ** 32 - 1 }), { minLength: 1, maxLength: 12 }), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 1, max: 20_000 }),
      (hashes, j, windowMs) => {
        const cycle = ladder(j);
        let most = 0;
        for (let x = 0; x < cycle; x++) {
          let n = 0;
          for (const h of hashes) {
            const phase = h % cycle;
            n += Math.floor((x + windowMs - phase) / cycle) - Math.floor((x - phase) / cycle);
          }
          most = Math.max(most, n);
        }
        expect(dueMax(phasesIn(hashes, cycle), cycle, windowMs)).toBe(most);
      },
    ), { numRuns: 60 });
  });
});

describe('headsDue', () => {
  it('puts the active projects first and takes a quiet one only when a due time of it passed since the last sync', () => {
    const projects = ids(30, 1);
    const active = new Set(projects.slice(3, 6));
    const cycle = ladder(5);
    const last = 1_700_000_000_000;
    const now = last + 3_000;
    const heads = headsDue(projects, active, cycle, last, now);
    expect(new Set(heads.slice(0, 3))).toEqual(active);
    const quiet = heads.slice(3);
    expect(quiet.length).toBeLessThan(27);
    for (const id of projects.filter((p) => !active.has(p))) {
      const phase = phaseHash(id) % cycle;
      const due = Math.floor((now - phase) / cycle) > Math.floor((last - phase) / cycle);
      expect(quiet.includes(id)).toBe(due);
    }
    // no last sync, no rotation, or a whole cycle gone by: every project
    expect(headsDue(projects, active, cycle, null, now)).toHaveLength(30);
    expect(headsDue(projects, active, 0, last, now)).toHaveLength(30);
    expect(headsDue(projects, active, cycle, now - cycle, now)).toHaveLength(30);
  });

  it('checks every project within the longest cycle used plus the longest gap between syncs, whatever cycles and activity each sync had', () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 6 }), fc.integer({ min: 200, max: 9_000 }),
      fc.array(fc.record({ gap: fc.integer({ min: 1, max: 1_000 }), j: fc.nat(6), active: fc.nat(4) }), { minLength: 50, maxLength: 400 }),
      fc.integer({ min: 0, max: 10 ** 9 }),
      (n, jMax, gapMax, syncs, offset) => {
        const projects = ids(n, offset);
        const start = 1_700_000_000_000 + offset;
        const checked = new Map(projects.map((p) => [p, start]));
        let last = start;
        let longest = 0;
        let gapLongest = 0;
        for (const s of syncs) {
          const gap = Math.ceil((s.gap / 1_000) * gapMax);
          const now = last + gap;
          const cycle = ladder(Math.min(s.j, jMax));
          longest = Math.max(longest, cycle);
          gapLongest = Math.max(gapLongest, gap);
          const active = new Set(projects.filter((_, i) => i % 7 < s.active && i % 3 === 0));
          for (const p of headsDue(projects, active, cycle, last, now)) {
            expect(now - (checked.get(p) as number)).toBeLessThanOrEqual(longest + gapLongest);
            checked.set(p, now);
          }
          last = now;
        }
        // the projects not checked at the end were checked within the bound too
        for (const at of checked.values()) expect(last - at).toBeLessThanOrEqual(longest + gapLongest);
      },
    ), { numRuns: 80 });
  });
});

describe('cadenceFrom', () => {
  const NO_HOOKS = { trusted: false, webhookAt: null };
  const config = (staleness: number): FreshnessConfig => ({ INDEX_MAX_STALENESS_MS: staleness, INDEX_RECONCILE_MS: 60_000, INDEX_ACTIVE_MS: 300_000, WEBHOOK_RECONCILE_MS: 600_000, TEMPLATES_RECONCILE_MS: 60_000 });

  it('without active projects is the bound of whole syncs (every project at every sync, a full sync\'s calls kept aside)', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 500 }), fc.nat(50), fc.integer({ min: 10, max: 2_000 }), (projects, moving, perMin) => {
      const hashes = ids(projects, 2).map(phaseHash);
      const c = cadenceFrom(config(5_000), { projects, active: 0, moving }, hashes, NO_HOOKS, 0, perMin);
      // a minute's full syncs kept aside: the team, its members, the templates due (TEMPLATES_RECONCILE_MS's rotation)
      const full = fullCallsPerMin(config(5_000), projects, hashes);
      expect(full).toBeLessThanOrEqual(projects + 2);
      const interval = budgetIntervalMs(syncCallsFor(projects, moving), Math.max(1, perMin - full));
      const bound = Math.max(5_000, interval + SCHEDULER_TICK_MS); // a sync runs at the first tick past its due time
      expect(c).toEqual({ intervalMs: Math.max(2_500, interval), cycleMs: 0, activeBoundMs: bound, boundMs: bound });
    }));
  });

  it('at default settings, a 100-project team with 5 active projects: active projects within INDEX_MAX_STALENESS_MS, the team within its cycle', () => {
    const hashes = ids(100, 3).map(phaseHash);
    const c = cadenceFrom(config(5_000), { projects: 100, active: 5, moving: 5 }, hashes, NO_HOOKS, 0, 600);
    // whole syncs: 106 calls each, four a minute beside a full sync's 102
    expect(fullCallsPerMin(config(5_000), 100, hashes)).toBe(102);
    const whole = Math.max(5_000, budgetIntervalMs(syncCallsFor(100, 5), 600 - 102));
    expect(whole).toBe(15_000);
    expect(c.activeBoundMs).toBe(5_000);
    expect(c.cycleMs).toBeGreaterThan(0);
    expect(c.boundMs).toBe(c.cycleMs + c.intervalMs + SCHEDULER_TICK_MS);
    // the templates read in a rotation of 5 minutes (TEMPLATES_RECONCILE_MS) leave the quiet projects a shorter cycle
    const rotated = { ...config(5_000), TEMPLATES_RECONCILE_MS: 300_000 };
    expect(fullCallsPerMin(rotated, 100, hashes)).toBeLessThan(40);
    const r = cadenceFrom(rotated, { projects: 100, active: 5, moving: 5 }, hashes, NO_HOOKS, 0, 600);
    expect(r.activeBoundMs).toBe(5_000);
    expect(r.cycleMs).toBeLessThan(c.cycleMs);
  });

  it('keeps its promises on simulated time: active projects first at every sync, every quiet one within the bound, '
    + 'and no calendar minute past the budget', () => {
    fc.assert(fc.property(
      fc.integer({ min: 3, max: 150 }), fc.integer({ min: 1, max: 12 }), fc.nat(12), fc.integer({ min: 20, max: 1_500 }),
      fc.constantFrom(1_000, 2_000, 5_000), fc.integer({ min: 0, max: 59_999 }), fc.integer({ min: 0, max: 10 ** 6 }),
      (projects, activeWanted, moving, perMin, staleness, offset, salt) => {
        const active = Math.min(activeWanted, projects - 1);
        const list = ids(projects, salt);
        const c = cadenceFrom(config(staleness), { projects, active, moving }, list.map(phaseHash), NO_HOOKS, 0, perMin);
        if (c.cycleMs === 0) return; // whole syncs: as before (the test above)
        const whole = budgetIntervalMs(syncCallsFor(projects, moving), Math.max(1, perMin - projects - 2));
        expect(c.activeBoundMs).toBeLessThan(Math.max(staleness, whole + SCHEDULER_TICK_MS));
        const activeSet = new Set(list.slice(0, active));
        const start = 1_700_000_040_000 + offset;
        const checked = new Map(list.map((p) => [p, start]));
        const perMinute = new Map<number, number>();
        let last = start;
        for (let now = start + c.intervalMs; now < start + 3 * c.cycleMs + 180_000; now += c.intervalMs) {
          const heads = headsDue(list, activeSet, c.cycleMs, last, now);
          expect(heads.slice(0, active).every((p) => activeSet.has(p))).toBe(true);
          const minute = Math.floor(now / 60_000);
          perMinute.set(minute, (perMinute.get(minute) ?? 0) + syncCallsWith(heads.length, projects, moving));
          for (const p of heads) {
            expect(now - (checked.get(p) as number)).toBeLessThanOrEqual(c.boundMs);
            checked.set(p, now);
          }
          last = now;
        }
        for (const calls of perMinute.values()) expect(calls).toBeLessThanOrEqual(perMin);
      },
    ), { numRuns: 100 });
  });
});
