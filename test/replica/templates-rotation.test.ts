import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullCallsPerMin } from '../../src/replica/sync/freshness.js';
import { phaseHash, templatesDue, templatesDueCount } from '../../src/replica/sync/rotation.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Issue 43: a polled team's full sync (every INDEX_RECONCILE_MS) read every project's templates — 102 of a 100-project
 * team's 600 calls a minute, which left the quiet projects' rotation a 32 s cycle where 16 s was wanted. The templates
 * are read in a rotation of TEMPLATES_RECONCILE_MS instead: each project once a period, at its phase.
 */
const ids = (n: number, salt: number) => Array.from({ length: n }, (_, i) => `proj_${salt}_${i}`);

describe('templatesDue', () => {
  it('reads each project once per due time, whatever the full syncs\' spacing; all of them after a whole period', () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 1_000 }), fc.array(fc.integer({ min: 1, max: 200_000 }), { minLength: 1, maxLength: 12 }),
      fc.integer({ min: 0, max: 2 ** 40 }),
      (n, salt, gaps, start) => {
        const period = 300_000;
        const projects = ids(n, salt);
        const reads = new Map<string, number>();
        let at = start;
        for (const gap of gaps) {
          const due = templatesDue(projects, period, at, at + gap);
          // (the count the spread asks on reads, from the phase hashes: the same)
          expect(templatesDueCount(projects.map(phaseHash), period, at, at + gap)).toBe(due.length);
          for (const id of due) reads.set(id, (reads.get(id) ?? 0) + 1);
          at += gap;
        }
        for (const id of projects) {
          const phase = phaseHash(id) % period;
          // (a gap of a whole period or more reads every project once: its due times in it count once)
          let due = 0;
          let from = start;
          for (const gap of gaps) {
            const times = Math.floor((from + gap - phase) / period) - Math.floor((from - phase) / period);
            due += gap >= period ? 1 : times;
            from += gap;
          }
          expect(reads.get(id) ?? 0).toBe(due);
        }
        expect(templatesDue(projects, period, null, start)).toEqual(projects);
      },
    ), { numRuns: 200 });
  });

  it('the calls fullCallsPerMin keeps aside hold every minute\'s full syncs (any phases, any start)', () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 200 }), fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 0, max: 2 ** 40 }),
      fc.constantFrom(15_000, 30_000, 60_000), fc.constantFrom(60_000, 120_000, 300_000, 600_000),
      (n, salt, start, reconcile, templates) => {
        const c = { INDEX_RECONCILE_MS: reconcile, TEMPLATES_RECONCILE_MS: templates };
        const projects = ids(n, salt);
        const kept = fullCallsPerMin(c, n, projects.map(phaseHash));
        // full syncs every INDEX_RECONCILE_MS from `start`; the calls of those starting in one calendar minute
        const minute = Math.ceil(start / 60_000) * 60_000;
        let calls = 0;
        for (let at = start + reconcile; at < minute + 60_000; at += reconcile) {
          if (at >= minute) calls += 2 + templatesDue(projects, templates, at - reconcile, at).length;
        }
        expect(calls).toBeLessThanOrEqual(kept);
        // never more than every project at every full sync (the old count); well below it for a large team
        const old = Math.ceil(60_000 / reconcile) * (n + 2);
        expect(kept).toBeLessThanOrEqual(old);
        if (n >= 100 && templates >= 300_000 && reconcile === 60_000) expect(kept).toBeLessThan(0.6 * old);
      },
    ), { numRuns: 200 });
  });
});

describe('fullCallsPerMin', () => {
  it('with INDEX_RECONCILE_MS 0 (a full sync at every sync) keeps every project\'s aside, as before the rotation — not NaN', () => {
    expect(fullCallsPerMin({ INDEX_RECONCILE_MS: 0, TEMPLATES_RECONCILE_MS: 300_000 }, 10, ids(10, 1).map(phaseHash))).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('a polled team\'s full syncs', () => {
  let sim: RunningSim;
  let gw: TestGateway;
  const RECONCILE = 60_000;
  const PERIOD = 300_000;

  beforeAll(async () => {
    sim = await startSim();
    gw = await startGateway({ INDEX_RECONCILE_MS: String(RECONCILE), TEMPLATES_RECONCILE_MS: String(PERIOD) }, {}, { sim, simClock: true });
    await gw.addUser(0, 'templates@example.com');
    await gw.deps.replica!.syncNow(sim.keys[0]!.teams.map((t) => t.id));
  });
  afterAll(async () => { await gw?.close(); await sim?.sim.close(); });

  it('read each project\'s templates once a TEMPLATES_RECONCILE_MS between them, not every project\'s at each', async () => {
    const team = sim.keys[0]!.teams[0]!.id;
    const projects = [...sim.sim.world.projects.values()].filter((p) => p.teamId === team).map((p) => p.id);
    expect(projects.length).toBeGreaterThan(1);
    const t = (await gw.deps.replica!.load(team))!;
    // (the background left out, for every team the key reaches: a tick's sync of this team would take this test's
    // place, and the other teams' syncs, due at once in each new minute, spend the key's minute beside it — on a loaded
    // machine one came between the clock's move and this team's sync, which then made no call: a fresh clone of 6667348)
    const held = gw.deps.replica as unknown as { scheduler: { pending(): Promise<void>[] }; registry: { values(): Iterable<{ readAt: number }> } };
    for (const x of held.registry.values()) x.readAt = Number.NEGATIVE_INFINITY;
    await Promise.all(held.scheduler.pending());
    // this team's calls (their request id names it: the background may sync the key's other teams meanwhile)
    const calls = async () => {
      const recent = (await (await fetch(`${sim.url}/_sim/requests`)).json()) as { path: string; query: string; request_id: string | null }[];
      const own = recent.filter((r) => r.request_id === `gateway-index-${team}`);
      return {
        templatesOf: own.filter((r) => r.path === '/v1/templates').map((r) => new URLSearchParams(r.query).get('project_id')),
        team: own.filter((r) => r.path === '/v1/teams').length,
      };
    };
    // one full sync as the clock reaches INDEX_RECONCILE_MS since the last, five of them: a whole period
    const read: (string | null)[] = [];
    for (let i = 0; i < PERIOD / RECONCILE; i++) {
      sim.sim.clock.advance(RECONCILE);
      await fetch(`${sim.url}/_sim/stats/reset`, { method: 'POST' });
      await gw.deps.replica!.syncTeam(t, true);
      const made = await calls();
      expect(made.team).toBe(1); // (each was the full one: the team read again)
      read.push(...made.templatesOf);
    }
    // each project's templates once in the period (before: every project's at each full sync, 5 × projects)
    expect(read.length).toBe(projects.length);
    expect(new Set(read)).toEqual(new Set(projects));
  });
});

describe('a full sync of a rotation of templates', () => {
  let sim: RunningSim;
  let gw: TestGateway;
  const RECONCILE = 60_000;
  const PERIOD = 120_000;

  beforeAll(async () => {
    // (5 projects a team, their templates read once in two minutes: a full sync reads some of them)
    sim = await startSim({ scale: 'demo' });
    // (a long staleness bound: the team's regular syncs come tens of seconds apart)
    gw = await startGateway({ INDEX_RECONCILE_MS: String(RECONCILE), TEMPLATES_RECONCILE_MS: String(PERIOD), INDEX_MAX_STALENESS_MS: '40000' }, {}, { sim, simClock: true });
    await gw.addUser(0, 'late-full@example.com');
    await gw.deps.replica!.syncNow(sim.keys[0]!.teams.map((t) => t.id));
  });
  afterAll(async () => { await gw?.close(); await sim?.sim.close(); });

  it('runs alone at the tick it falls due — the team, its members, the templates due — not at the next regular sync (review M1)', async () => {
    const team = sim.keys[0]!.teams[0]!.id;
    const t = (await gw.deps.replica!.load(team))!;
    const held = gw.deps.replica as unknown as {
      scheduler: {
        pending(): Promise<void>[]; fulls: { lastAt(id: string): number | null };
        deps: { store: { lease(id: string, holder: string, ms: number): Promise<boolean>; release(id: string, holder: string): Promise<boolean> } };
      };
      registry: { values(): Iterable<{ id: string; readAt: number }> };
    };
    // (the other teams' background left out: only this team is read)
    for (const x of held.registry.values()) x.readAt = Number.NEGATIVE_INFINITY;
    await Promise.all(held.scheduler.pending());
    const made = async () => {
      const recent = (await (await fetch(`${sim.url}/_sim/requests`)).json()) as { path: string; request_id: string | null }[];
      const own = recent.filter((r) => r.request_id === `gateway-index-${team}`).map((r) => r.path);
      await fetch(`${sim.url}/_sim/stats/reset`, { method: 'POST' });
      return { team: own.filter((p) => p === '/v1/teams').length, templates: own.filter((p) => p === '/v1/templates').length, all: own.length };
    };
    const tick = async () => {
      t.readAt = sim.sim.clock.now();
      await gw.deps.replica!.tick();
      await Promise.all(held.scheduler.pending());
      return made();
    };
    const to = (at: number) => sim.sim.clock.advance(at - sim.sim.clock.now());
    const none = { team: 0, templates: 0, all: 0 };
    let full = held.scheduler.fulls.lastAt(team)!;
    expect(full).toBeGreaterThan(0);
    // a full sync (the regular one, when due) at a moment chosen so that the next one's window holds the due times of
    // some of the team's projects, not all (the projects' ids, and so their phases, are drawn anew at each run)
    const some = (at: number) => {
      const n = templatesDue(t.projects.keys(), PERIOD, at, at + RECONCILE + 100).length;
      return n > 0 && n < t.projects.size;
    };
    let at = full + RECONCILE;
    while (!some(at)) at += 1_000;
    to(at);
    await made();
    await gw.deps.replica!.syncTeam(t, true);
    expect((await made()).team).toBe(1);
    full = at;
    expect(held.scheduler.fulls.lastAt(team)).toBe(full);
    // a regular sync 10 s before the full one falls due (not the full one: no team read)
    to(full + RECONCILE - 10_000);
    await made();
    await gw.deps.replica!.syncTeam(t, true);
    const regular = await made();
    expect(regular.team).toBe(0);
    expect(regular.all).toBeGreaterThan(0);
    const syncedAt = full + RECONCILE - 10_000;
    expect(t.syncedAt).toBe(syncedAt);
    // a tick before it falls due: nothing (the regular cadence is tens of seconds)
    to(full + RECONCILE - 500);
    expect(await tick()).toEqual(none);
    // the first tick past it: the full sync alone (before, the next regular sync, tens of seconds later, made it) —
    // the team, its members and the templates due since the last, nothing else; the sync mark left as it was
    to(full + RECONCILE + 100);
    const alone = await tick();
    const due = templatesDue(t.projects.keys(), PERIOD, full, full + RECONCILE + 100).length;
    expect(alone).toEqual({ team: 1, templates: due, all: 2 + due });
    expect(due).toBeGreaterThan(0);
    expect(t.syncedAt).toBe(syncedAt);
    full = full + RECONCILE + 100;
    expect(held.scheduler.fulls.lastAt(team)).toBe(full);
    // and once: the next ticks wait for the cadence again
    to(full + 500);
    expect(await tick()).toEqual(none);
    // a read's own sync after the next one fell due does not make it, nor put it off: the next tick runs it
    to(full + RECONCILE + 100);
    await gw.deps.replica!.syncTeam(t, false);
    expect((await made()).team).toBe(0);
    to(full + RECONCILE + 200);
    expect((await tick()).team).toBe(1);
    full += RECONCILE + 200;
    expect(held.scheduler.fulls.lastAt(team)).toBe(full);
    // another instance holding the team's lease (a regular sync just before: none due): no full sync, and not tried
    // again at every tick — an interval (half the 40 s bound) later
    to(full + RECONCILE - 1_000);
    await gw.deps.replica!.syncTeam(t, false);
    await made();
    const { store } = held.scheduler.deps;
    expect(await store.lease(team, 'another-instance', 600_000)).toBe(true);
    to(full + RECONCILE + 100);
    expect(await tick()).toEqual(none);
    expect(await store.release(team, 'another-instance')).toBe(true);
    to(full + RECONCILE + 600);
    expect(await tick()).toEqual(none);
    expect(held.scheduler.fulls.lastAt(team)).toBe(full);
    to(full + RECONCILE + 100 + 20_000 + 250);
    expect((await tick()).team).toBe(1);
    expect(held.scheduler.fulls.lastAt(team)).toBe(full + RECONCILE + 100 + 20_000 + 250);
    // the team's last sync another instance's (its mark read from the store): that instance makes the full syncs — none
    // alone here (each instance counts its own: two would each make one); this instance's next sync, if it runs one, is full
    full += RECONCILE + 100 + 20_000 + 250;
    to(full + RECONCILE - 1_000);
    (t as { syncedAt: number | null }).syncedAt = full + RECONCILE - 1_000;
    to(full + RECONCILE + 100);
    expect(await tick()).toEqual(none);
    expect(held.scheduler.fulls.lastAt(team)).toBe(full);
    await gw.deps.replica!.syncTeam(t, true);
    expect((await made()).team).toBe(1);
    expect(held.scheduler.fulls.lastAt(team)).toBe(full + RECONCILE + 100);
  });
});
