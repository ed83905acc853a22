import type { RenderStatus } from '../v1/schemas.js';
import { Rng } from './rng.js';
import type { SimAccount, SimKey, SimPerson, SimProject, SimRender, SimTeam, SimTemplate } from './model.js';

export interface Scale {
  teams: number;
  projectsPerTeam: number;
  templatesPerProject: number;
  rendersPerProject: number;
  people: number;
}

export const SCALES: Readonly<Record<string, Scale>> = {
  tiny: { teams: 4, projectsPerTeam: 2, templatesPerProject: 2, rendersPerProject: 8, people: 5 },
  small: { teams: 4, projectsPerTeam: 4, templatesPerProject: 3, rendersPerProject: 30, people: 6 },
  demo: { teams: 4, projectsPerTeam: 5, templatesPerProject: 3, rendersPerProject: 40, people: 6 },
  bench: { teams: 10, projectsPerTeam: 20, templatesPerProject: 3, rendersPerProject: 500, people: 8 },
  /** 200 000 renders, 2 teams × 100 projects, one key reaching both (`STALENESS_SCALE=staleness npm run bench:staleness`). */
  staleness: { teams: 2, projectsPerTeam: 100, templatesPerProject: 1, rendersPerProject: 1000, people: 4 },
  /** 1 000 000 renders, 100 000 a team (`npm run bench:scale`); the simulator process needs a larger heap (~4 GB). */
  million: { teams: 10, projectsPerTeam: 100, templatesPerProject: 3, rendersPerProject: 1000, people: 8 },
};

export interface SeedWorld {
  accounts: SimAccount[];
  people: SimPerson[];
  keys: SimKey[];
  teams: SimTeam[];
  projects: SimProject[];
  renders: SimRender[];
}

const WORDS = [
  'Summer',
  'Launch',
  'Promo',
  'Teaser',
  'Recap',
  'Intro',
  'Outro',
  'Holiday',
  'Product',
  'Brand',
  'Story',
  'Sale',
  'Event',
  'Weekly',
  'Update',
];
const UNICODE_NAMES = [
  'Ünïcødé Café 🎬', '日本語のプロジェクト', 'Ελληνικά — δοκιμή', 'emoji 🚀✨ render', 'Ñandú «quoted» & <tags>'];
const LONG_NAME = 'A very long render name that keeps going '.repeat(10).slice(0, 250);
const DAY = 86_400_000;

/** Time a render spends in each in-progress status (ms) when created through the API. */
export const LIFECYCLE_MS: Readonly<Record<string, number>> = { initializing: 400, ready: 400, queued: 600, processing: 2000, finalizing: 600 };
export const PROGRESS: readonly RenderStatus[] = ['initializing', 'ready', 'queued', 'processing', 'finalizing'];

/** The transitions after `from` entered at `at`, ending in complete or (if `fails`) failed. */
export function scheduleFrom(from: RenderStatus, at: number, fails: boolean): { status: RenderStatus; at: number }[] {
  const out: { status: RenderStatus; at: number }[] = [];
  let i = PROGRESS.indexOf(from);
  if (i < 0) return out;
  let t = at;
  for (; i < PROGRESS.length; i++) {
    const s = PROGRESS[i] as RenderStatus;
    t += LIFECYCLE_MS[s] ?? 0;
    if (fails && s === 'processing') {
      out.push({ status: 'failed', at: t });
      return out;
    }
    out.push({ status: (PROGRESS[i + 1] ?? 'complete') as RenderStatus, at: t });
  }
  return out;
}

/**
 * A deterministic world for a seed and scale, with the edge cases old integrations meet: unicode and
 * 250-character names, null emails and descriptions, equal timestamps, every status, people on several
 * teams with different roles, and a team reachable only through its account's administrator.
 */
export function generateWorld(seed: number, scale: Scale, now: number): SeedWorld {
  const rng = new Rng(seed);
  const hex = (n: number) => rng.token(n).toLowerCase();
  const accounts: SimAccount[] = [];
  const people: SimPerson[] = [];
  const keys: SimKey[] = [];
  for (let p = 0; p < Math.max(4, scale.people); p++) {
    const id = `user_${hex(16)}`;
    const email = p === 2 ? null : p === 0 ? 'owner@sim.example' : `person${p}@sim.example`;
    people.push({ id, email, createdAt: now - rng.int(400, 900) * DAY, name: `Person ${p}` });
    keys.push({ key: `sk_${rng.token(32)}`, userId: id, name: `key of person ${p}`, revoked: false });
  }
  const nAccounts = Math.max(2, Math.ceil(scale.teams / 2));
  for (let a = 0; a < nAccounts; a++) {
    accounts.push({ id: `acc_${hex(16)}`, name: `Account ${a}`, admins: [] });
  }
  // the organisation's administrator: administers every account, member of no team (reaches all teams)
  const orgAdmin: SimPerson = { id: `user_${hex(16)}`, email: 'org-admin@sim.example', createdAt: now - 1000 * DAY, name: 'Org admin' };
  for (const a of accounts) a.admins.push(orgAdmin.id);
  // person 0 administers account 1; person 1 administers account 0
  (accounts[1] as SimAccount).admins.push((people[0] as SimPerson).id);
  (accounts[0] as SimAccount).admins.push((people[1] as SimPerson).id);

  const teams: SimTeam[] = [];
  for (let t = 0; t < scale.teams; t++) {
    const account = accounts[t % nAccounts] as SimAccount;
    teams.push({
      id: `team_${hex(16)}`,
      name: t === 1 ? (UNICODE_NAMES[0] as string) : `Team ${rng.pick(WORDS)} ${t}`,
      accountId: account.id,
      createdAt: now - rng.int(300, 700) * DAY,
      credits: t === scale.teams - 1 ? 0 : 1_000_000,
      members: [],
      webhooks: [],
    });
  }
  const P = (i: number) => people[i] as SimPerson;
  const T = (i: number) => teams[i] as SimTeam;
  const join = (team: SimTeam, person: SimPerson, role: 'admin' | 'member') =>
    team.members.push({ userId: person.id, role, joinedAt: team.createdAt + rng.int(1, 100) * DAY });
  // person 0: admin of team 0, member of team 2; reaches team 1 and 3 (account 1) only as account admin
  join(T(0), P(0), 'admin');
  if (teams.length > 2) join(T(2), P(0), 'member');
  // person 1: member of team 0, admin of team 1 (several teams, different roles)
  join(T(0), P(1), 'member');
  join(T(1), P(1), 'admin');
  // person 2 (null email) member of team 0; person 3 admin of the last team
  join(T(0), P(2), 'member');
  join(T(teams.length - 1), P(3), 'admin');
  for (let p = 4; p < people.length; p++) join(T(p % teams.length), P(p), rng.chance(0.3) ? 'admin' : 'member');
  for (const team of teams) if (!team.members.some((m) => m.role === 'admin')) join(team, P(3), 'admin');

  const projects: SimProject[] = [];
  const renders: SimRender[] = [];
  let seq = 0;
  let moving = 0;
  for (const team of teams) {
    for (let j = 0; j < scale.projectsPerTeam; j++) {
      const createdAt = now - rng.int(30, 250) * DAY - rng.int(0, DAY);
      const creator = team.members[rng.int(0, team.members.length - 1)] as { userId: string };
      const pid = `proj_${hex(16)}`;
      const name =
        j === 0 && team === teams[0]
          ? (UNICODE_NAMES[1] as string)
          : j === 1 && team === teams[0]
            ? LONG_NAME
            : `${rng.pick(WORDS)} ${rng.pick(WORDS)} ${j}`;
      const templates: SimTemplate[] = [];
      const nTpl = j % 4 === 3 ? 0 : scale.templatesPerProject;
      for (let k = 0; k < nTpl; k++) {
        const keysets = [
          ['title', 'subtitle'],
          ['title', 'subtitle', 'color', 'logo_url'],
          ['headline', 'price', 'cta'],
        ];
        const fieldKeys = keysets[k % keysets.length] as string[];
        templates.push({
          id: `tpl_${hex(16)}`,
          name: k === 0 ? `Default <${rng.pick(WORDS)}> & more` : `${rng.pick(WORDS)} template ${k}`,
          description: k === 1 ? null : `Edit the <b>${fieldKeys[0]}</b> & friends.\nSecond line.`,
          projectId: pid,
          compositionId: `comp_${hex(12)}`,
          fields: fieldKeys.map((key, idx) => ({
            key,
            label: idx === 1 ? null : key.replace('_', ' '),
            description: idx === 0 ? `The ${key}` : null,
            kind: key === 'color' ? 'color' : key === 'logo_url' ? 'media' : 'control',
            widget: key === 'color' ? 'color' : idx === 2 ? null : 'text',
            default_value: key === 'price' ? 9.99 : key === 'cta' ? true : key === 'color' ? '#ff0000' : `Default ${key}`,
          })),
        });
      }
      const config: Record<string, unknown> = { composition: `comp_${hex(8)}`, fps: 30, title: 'Default title' };
      projects.push({
        id: pid,
        name,
        teamId: team.id,
        createdBy: j === 2 ? null : creator.userId,
        createdAt,
        updatedAt: j % 3 === 0 ? null : createdAt + rng.int(1, 20) * DAY,
        hasThumbnail: j % 5 !== 4,
        templates,
        config,
      });
      let t = createdAt + DAY;
      for (let r = 0; r < scale.rendersPerProject; r++) {
        // equal timestamps: every 7th render shares the previous render's second
        if (r % 7 !== 6) t += rng.int(60, Math.max(120, Math.floor((now - createdAt) / (scale.rendersPerProject + 2) / 1000))) * 1000;
        if (t > now - 60_000) t = now - 60_000 - (scale.rendersPerProject - r) * 1000;
        const roll = rng.next();
        const inProgress = r >= scale.rendersPerProject - 2; // the newest two of each project are still moving
        const status: RenderStatus = inProgress ? (PROGRESS[moving % PROGRESS.length] as RenderStatus) : roll < 0.12 ? 'failed' : 'complete';
        const tpl = templates.length > 0 && rng.chance(0.7) ? (rng.pick(templates) as SimTemplate) : null;
        const variants = rng.chance(0.2)
          ? ['master', '720p']
          : rng.chance(0.2)
            ? ['master', '1080p', '720p', '360p', 'still', 'gif_preview']
            : ['master', '1080p', '720p', '360p', 'still'];
        const statusAt = inProgress ? now - 100 : t + 5_000;
        renders.push({
          id: `rend_${hex(20)}`,
          seq: seq++,
          name: r % 11 === 5 ? (UNICODE_NAMES[r % UNICODE_NAMES.length] as string) : r % 97 === 13 ? LONG_NAME : `${rng.pick(WORDS)} render ${r}`,
          status,
          type: rng.chance(0.8) ? 'cloud' : 'local',
          projectId: pid,
          teamId: team.id,
          createdBy: rng.chance(0.1) ? null : creator.userId,
          createdAt: t,
          updatedAt: status === 'initializing' ? null : statusAt,
          variants,
          config: { ...config },
          templateId: tpl?.id ?? null,
          pending: inProgress ? scheduleFrom(status, now - 100, moving++ % 4 === 3) : [],
        });
      }
    }
  }
  people.push(orgAdmin);
  keys.push({ key: `sk_${rng.token(32)}`, userId: orgAdmin.id, name: 'key of the org admin', revoked: false });
  return { accounts, people, keys, teams, projects, renders };
}
