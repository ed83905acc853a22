import { createHmac } from 'node:crypto';
import type {
  V1Project,
  V1Render,
  V1Team,
  V1TeamMember,
  V1Template,
  V1TemplateSummary,
  V1User,
} from '../v1/schemas.js';
import type { SimClock } from './clock.js';
import { CursorCodec } from './cursor.js';
import { paginate, type ListOptions } from './paginate.js';
import { SimHttpError, validation } from './errors.js';
import { generateWorld, type Scale } from './generator.js';
import type { SimAccount, SimKey, SimPerson, SimProject, SimRender, SimTeam } from './model.js';
import { Rng } from './rng.js';

const notFound = (what: string) => new SimHttpError(404, { error: `${what} not found.` });

const sec = (ms: number) => Math.floor(ms / 1000);

/**
 * The v1 world's seeded data and everything that only reads it: keys and reach (404 for unreachable), the API's JSON
 * views (signed URLs) and the read endpoints (cursor pagination with short pages). `World` (`./world.ts`) adds the writes
 * and the lifecycle.
 */
export class WorldReads {
  readonly accounts = new Map<string, SimAccount>();
  readonly people = new Map<string, SimPerson>();
  readonly keys = new Map<string, SimKey>();
  readonly teams = new Map<string, SimTeam>();
  readonly projects = new Map<string, SimProject>();
  readonly renders = new Map<string, SimRender>();
  protected readonly rendersByProject = new Map<string, SimRender[]>();
  protected readonly active = new Set<SimRender>();
  private readonly cursors: CursorCodec;
  protected readonly rng: Rng;
  protected seq = 0;
  /** The instant the seeded data was generated around (the same origin gives the same timestamps). */
  readonly origin: number;

  constructor(
    readonly clock: SimClock,
    seed: number,
    scale: Scale,
    readonly options: { urlTtlS: number; cdnBase: string; origin?: number } = { urlTtlS: 300, cdnBase: 'https://cdn.sim.invalid' },
  ) {
    this.rng = new Rng(seed * 7919 + 1);
    this.cursors = new CursorCodec(`sim-cursor-${seed}`);
    this.origin = options.origin ?? clock.now();
    const w = generateWorld(seed, scale, this.origin);
    for (const a of w.accounts) this.accounts.set(a.id, a);
    for (const p of w.people) this.people.set(p.id, p);
    for (const k of w.keys) this.keys.set(k.key, k);
    for (const t of w.teams) this.teams.set(t.id, t);
    for (const p of w.projects) {
      this.projects.set(p.id, p);
      this.rendersByProject.set(p.id, []);
    }
    for (const r of w.renders) this.addRender(r);
    this.seq = w.renders.length;
  }

  protected addRender(r: SimRender): void {
    this.renders.set(r.id, r);
    this.rendersByProject.get(r.projectId)?.push(r);
    if (r.pending.length > 0) this.active.add(r);
  }

  // ---------------------------------------------------------------- keys and reach

  authenticate(header: string | undefined): SimPerson {
    if (!header) throw new SimHttpError(401, { error: 'Missing API key: send Authorization: Bearer <API_KEY>.' });
    const m = /^Bearer\s+(\S+)$/i.exec(header);
    const key = m ? this.keys.get(m[1] as string) : undefined;
    if (!key || key.revoked) throw new SimHttpError(401, { error: 'Invalid API key.' });
    const person = this.people.get(key.userId);
    if (!person) throw new SimHttpError(401, { error: 'Invalid API key.' });
    return person;
  }

  /** Teams the person reaches, with their role (null when reached only as account administrator). */
  reach(person: SimPerson): Map<string, 'admin' | 'member' | null> {
    const out = new Map<string, 'admin' | 'member' | null>();
    for (const team of this.teams.values()) {
      const member = team.members.find((m) => m.userId === person.id);
      if (member) out.set(team.id, member.role);
      else if (this.accounts.get(team.accountId)?.admins.includes(person.id)) out.set(team.id, null);
    }
    return out;
  }

  protected reachableTeam(person: SimPerson, id: string): SimTeam {
    const team = this.teams.get(id);
    if (!team || !this.reach(person).has(id)) throw notFound('Team');
    return team;
  }

  protected reachableProject(person: SimPerson, id: string): SimProject {
    const p = this.projects.get(id);
    if (!p || !this.reach(person).has(p.teamId)) throw notFound('Project');
    return p;
  }

  // ---------------------------------------------------------------- views (the API's JSON)

  private sign(path: string, expires: number): string {
    return createHmac('sha256', 'sim-cdn').update(`${path}:${expires}`).digest('hex').slice(0, 32);
  }

  private signedUrl(path: string): string {
    const expires = sec(this.clock.now()) + this.options.urlTtlS;
    return `${this.options.cdnBase}${path}?expires=${expires}&signature=${this.sign(path, expires)}`;
  }

  renderView(r: SimRender): V1Render {
    const team = this.teams.get(r.teamId) as SimTeam;
    const view: V1Render = {
      id: r.id,
      name: r.name,
      status: r.status,
      type: r.type,
      project: { id: r.projectId, team: team.id },
      created_by: r.createdBy,
      created_at: sec(r.createdAt),
      updated_at: r.updatedAt === null ? null : sec(r.updatedAt),
    };
    if (r.status === 'complete') {
      const ext = (v: string) => (v === 'master' ? 'mov' : v === 'still' ? 'jpg' : v === 'gif_preview' ? 'gif' : 'mp4');
      view.output = Object.fromEntries(r.variants.map((v) => [v, this.signedUrl(`/renders/${r.id}/${v}.${ext(v)}`)]));
    }
    return view;
  }

  projectView(p: SimProject): V1Project {
    const team = this.teams.get(p.teamId) as SimTeam;
    return {
      id: p.id,
      name: p.name,
      team: { id: team.id, name: team.name },
      created_by: p.createdBy,
      thumbnail_url: p.hasThumbnail ? this.signedUrl(`/projects/${p.id}/thumbnail.jpg`) : null,
      created_at: sec(p.createdAt),
      updated_at: p.updatedAt === null ? null : sec(p.updatedAt),
    };
  }

  private teamView(t: SimTeam, role: 'admin' | 'member' | null): V1Team {
    return { id: t.id, name: t.name, account_id: t.accountId, role, created_at: sec(t.createdAt) };
  }

  private userView(p: SimPerson): V1User {
    return { id: p.id, email: p.email, created_at: sec(p.createdAt) };
  }

  // ---------------------------------------------------------------- reads

  me(person: SimPerson): V1User {
    return this.userView(person);
  }

  listTeams(person: SimPerson): { data: V1Team[] } {
    const reach = this.reach(person);
    return { data: [...reach].map(([id, role]) => this.teamView(this.teams.get(id) as SimTeam, role)) };
  }

  getTeam(person: SimPerson, id: string): V1Team {
    const team = this.reachableTeam(person, id);
    return this.teamView(team, this.reach(person).get(id) ?? null);
  }

  listMembers(person: SimPerson, teamId: unknown): { data: V1TeamMember[] } {
    const team = this.reachableTeam(person, requiredString(teamId, 'team_id'));
    return {
      data: team.members.map((m) => ({ ...this.userView(this.people.get(m.userId) as SimPerson), role: m.role, joined_at: sec(m.joinedAt) })),
    };
  }

  getUser(person: SimPerson, id: string): V1User {
    const target = this.people.get(id);
    if (!target) throw notFound('User');
    const reach = this.reach(person);
    const shares = id === person.id || [...reach.keys()].some((t) => this.teams.get(t)?.members.some((m) => m.userId === id));
    if (!shares) throw notFound('User');
    return this.userView(target);
  }

  listProjects(person: SimPerson, teamId: unknown, q: ListOptions) {
    const team = this.reachableTeam(person, requiredString(teamId, 'team_id'));
    const items = [...this.projects.values()].filter((p) => p.teamId === team.id);
    const page = paginate(
      this.cursors,
      '/v1/projects',
      `team=${team.id}`,
      items,
      (p) => p.createdAt,
      (p) => p.name,
      q,
      false,
    );
    return { ...page, data: page.data.map((p) => this.projectView(p)) };
  }

  getProject(person: SimPerson, id: string): V1Project {
    return this.projectView(this.reachableProject(person, id));
  }

  listTemplates(person: SimPerson, projectId: unknown): { data: V1TemplateSummary[] } {
    const p = this.reachableProject(person, requiredString(projectId, 'project_id'));
    return {
      data: p.templates.map(({ fields, ...t }) => ({
        id: t.id,
        name: t.name,
        description: t.description,
        project_id: t.projectId,
        target_composition_id: t.compositionId,
        field_count: fields.length,
      })),
    };
  }

  getTemplate(person: SimPerson, id: string, projectId: unknown): V1Template {
    const p = this.reachableProject(person, requiredString(projectId, 'project_id'));
    const t = p.templates.find((x) => x.id === id);
    if (!t) throw notFound('Template');
    return {
      id: t.id,
      name: t.name,
      description: t.description,
      project_id: t.projectId,
      target_composition_id: t.compositionId,
      field_count: t.fields.length,
      fields: t.fields.map((f) => ({ ...f })),
    };
  }

  listRenders(person: SimPerson, projectId: unknown, q: ListOptions) {
    const p = this.reachableProject(person, requiredString(projectId, 'project_id'));
    const status = q.status === undefined ? undefined : String(q.status);
    if (status !== undefined && !['initializing', 'ready', 'queued', 'processing', 'finalizing', 'complete', 'failed'].includes(status)) {
      throw validation([{ field: 'status', message: `status: must be one of the seven render statuses`, code: 'invalid_enum_value' }]);
    }
    const items = this.rendersByProject.get(p.id) ?? [];
    const page = paginate(
      this.cursors,
      '/v1/renders',
      `project=${p.id};status=${status ?? ''}`,
      items,
      (r) => r.createdAt,
      (r) => r.name,
      q,
      true,
      status === undefined ? undefined : (r) => r.status === status,
    );
    return { ...page, data: page.data.map((r) => this.renderView(r)) };
  }

  getRender(person: SimPerson, id: string): V1Render {
    const r = this.renders.get(id);
    if (!r || !this.reach(person).has(r.teamId)) throw notFound('Render');
    return this.renderView(r);
  }

  /** Internal look (admin route): the configuration copy a render was made from. */
  renderConfig(id: string): Record<string, unknown> | undefined {
    return this.renders.get(id)?.config;
  }

  /** Seeded people with their keys (admin route). */
  listKeys(): {
    user_id: string;
    email: string | null;
    name: string;
    api_key: string;
    revoked: boolean;
    teams: { id: string; role: string | null }[];
  }[] {
    return [...this.keys.values()].map((k) => {
      const p = this.people.get(k.userId) as SimPerson;
      return {
        user_id: p.id,
        email: p.email,
        name: p.name,
        api_key: k.key,
        revoked: k.revoked,
        teams: [...this.reach(p)].map(([id, role]) => ({ id, role })),
      };
    });
  }
}

function requiredString(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.length === 0) throw validation([{ field, message: `${field}: is required`, code: 'too_small' }]);
  return v;
}
