import { describe, expect, it } from 'vitest';
import { generateWorld, SCALES } from '../../src/sim/generator.js';

describe('simulator scales', () => {
  it('million: 10 teams × 100 projects × 1 000 renders, 100 000 a team', () => {
    const m = SCALES.million!;
    expect([m.teams, m.projectsPerTeam, m.rendersPerProject]).toEqual([10, 100, 1000]);
    expect(m.teams * m.projectsPerTeam * m.rendersPerProject).toBe(1_000_000);
    expect(m.projectsPerTeam * m.rendersPerProject).toBe(100_000);
  });

  it('the generator follows the preset\'s shape (million with 2 renders a project, to stay small)', () => {
    const w = generateWorld(1, { ...SCALES.million!, rendersPerProject: 2 }, 1_000_000_000_000);
    expect(w.teams).toHaveLength(10);
    expect(w.projects).toHaveLength(1000);
    expect(w.renders).toHaveLength(2000);
    for (const t of w.teams) expect(w.projects.filter((p) => p.teamId === t.id)).toHaveLength(100);
    // one-team keys exist for bench:scale's heavy and light users (people 4 to 7 each join one team)
    const reach = (userId: string) => w.teams.filter((t) => t.members.some((m) => m.userId === userId)).length;
    const admins = new Set(w.accounts.flatMap((a) => a.admins));
    expect(w.people.filter((p) => !admins.has(p.id) && reach(p.id) === 1).length).toBeGreaterThanOrEqual(2);
  });

  it('staleness: 200 000 renders in 2 teams × 100 projects, the first person\'s key reaching both (bench:staleness)', () => {
    const st = SCALES.staleness!;
    expect(st.teams * st.projectsPerTeam * st.rendersPerProject).toBe(200_000);
    const w = generateWorld(1, { ...st, rendersPerProject: 2 }, 1_000_000_000_000);
    expect(w.teams).toHaveLength(2);
    for (const t of w.teams) expect(w.projects.filter((p) => p.teamId === t.id)).toHaveLength(100);
    // person 0: a member of team 0, an administrator of team 1's account
    const first = w.people[0]!.id;
    const reaches = (t: (typeof w.teams)[number]) => t.members.some((m) => m.userId === first)
      || w.accounts.some((a) => a.id === t.accountId && a.admins.includes(first));
    expect(w.teams.every(reaches)).toBe(true);
  });

  it('bench: 100 000 renders, 10 000 a team', () => {
    const b = SCALES.bench!;
    expect(b.teams * b.projectsPerTeam * b.rendersPerProject).toBe(100_000);
  });
});
