import { createHmac } from 'node:crypto';
import { z } from 'zod';
import {
  CreateRenderBodySchema,
  type RenderStatus,
  type V1Project,
  type V1Render,
  type V1Team,
  type V1TeamMember,
  type V1Template,
  type V1TemplateSummary,
  type V1User,
} from '../v1/schemas.js';
import type { SimClock } from './clock.js';
import { CursorCodec } from './cursor.js';
import { paginate, type ListOptions } from './paginate.js';
import { SimHttpError, validation } from './errors.js';
import { generateWorld, scheduleFrom, type Scale } from './generator.js';
import type { SimAccount, SimKey, SimPerson, SimProject, SimRender, SimTeam } from './model.js';
import { Rng } from './rng.js';

const notFound = (what: string) => new SimHttpError(404, { error: `${what} not found.` });

export interface Transition {
  render: SimRender;
  from: RenderStatus;
  to: RenderStatus;
  at: number;
}

const sec = (ms: number) => Math.floor(ms / 1000);

/**
 * A change made to the world after it was generated, with the simulator time it was made at: replaying the writes of a
 * world, in order, on the world generated from the same seed, scale and origin gives the same world again — the same
 * ids (the generator's position moves with every id it hands out) and the same lifecycle (`src/sim/journal.ts`).
 */
export type WorldWrite =
  | { op: 'render'; at: number; person: string; body: unknown }
  | { op: 'project'; at: number; team: string; name: string; created_by: string | null }
  | { op: 'revoke'; at: number; key: string }
  | { op: 'rotate'; at: number; user: string }
  | { op: 'credits'; at: number; team: string; credits: number }
  | { op: 'clock'; at: number; advance_ms: number };

/**
 * The v1 world: seeded data plus every rule of the v1 document (reach, 404 for unreachable, cursor
 * pagination with short pages, lifecycle, credits, template values applied to a copy).
 */
export class World {
  readonly accounts = new Map<string, SimAccount>();
  readonly people = new Map<string, SimPerson>();
  readonly keys = new Map<string, SimKey>();
  readonly teams = new Map<string, SimTeam>();
  readonly projects = new Map<string, SimProject>();
  readonly renders = new Map<string, SimRender>();
  private readonly rendersByProject = new Map<string, SimRender[]>();
  private readonly active = new Set<SimRender>();
  private readonly cursors: CursorCodec;
  private readonly rng: Rng;
  private seq = 0;
  private transitionListener: (t: Transition) => void = () => {};
  private writeListener: (w: WorldWrite) => void = () => {};
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

  onTransition(listener: (t: Transition) => void): void {
    this.transitionListener = listener;
  }

  /** Called after every change made to the world (a render, a project, a key, credits, the clock moved). */
  onWrite(listener: (w: WorldWrite) => void): void {
    this.writeListener = listener;
  }

  /**
   * Makes the writes of an earlier run of this world again, in their order and at their times (the lifecycle moved up to
   * each one first); none is reported to the write listener. A write the world refuses means the writes are not this
   * world's.
   */
  replay(writes: readonly WorldWrite[]): void {
    const listener = this.writeListener;
    this.writeListener = () => {};
    try {
      for (const w of writes) {
        this.tick(w.at);
        switch (w.op) {
          case 'render': {
            const person = this.people.get(w.person);
            if (!person) throw new Error(`no person ${w.person}`);
            this.createRender(person, w.body, w.at);
            break;
          }
          case 'project':
            this.addProject(w.team, w.name, w.created_by, w.at);
            break;
          case 'revoke':
            this.revokeKey(w.key);
            break;
          case 'rotate':
            this.rotateKey(w.user);
            break;
          case 'credits':
            this.setCredits(w.team, w.credits);
            break;
          case 'clock':
            this.clock.advance(w.advance_ms);
            break;
        }
      }
    } finally {
      this.writeListener = listener;
    }
    this.tick();
  }

  /** Moves the simulator's clock forward (POST /_sim/clock) and applies the transitions now due. */
  advance(ms: number): number {
    const at = this.clock.now();
    this.clock.advance(ms);
    this.writeListener({ op: 'clock', at, advance_ms: ms });
    return this.tick();
  }

  /**
   * A project made in the v1 dashboard (there is no API for it, and no event): the simulator's admin route and tests
   * add one to a team, with one template, so the gateway's index has to discover it by listing.
   */
  addProject(teamId: string, name: string, createdBy: string | null = null, at = this.clock.now()): SimProject {
    if (!this.teams.has(teamId)) throw new SimHttpError(404, { error: `Team ${teamId} not found.` });
    const id = `proj_${this.rng.token(16).toLowerCase()}`;
    const p: SimProject = {
      id, name, teamId, createdBy, createdAt: at, updatedAt: null, hasThumbnail: false, config: {},
      templates: [{
        id: `tpl_${this.rng.token(16).toLowerCase()}`, name: `${name} template`, description: null, projectId: id,
        compositionId: `comp_${this.rng.token(12).toLowerCase()}`, fields: [],
      }],
    };
    this.projects.set(id, p);
    this.rendersByProject.set(id, []);
    this.writeListener({ op: 'project', at, team: teamId, name, created_by: createdBy });
    return p;
  }

  private addRender(r: SimRender): void {
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

  /** Revokes a key at once; the next request with it answers 401. */
  revokeKey(key: string): boolean {
    const k = this.keys.get(key);
    if (!k) return false;
    k.revoked = true;
    this.writeListener({ op: 'revoke', at: this.clock.now(), key });
    return true;
  }

  /** Issues a new key for a person and revokes their old ones (one key per person). */
  rotateKey(userId: string): string | undefined {
    if (!this.people.has(userId)) return undefined;
    for (const k of this.keys.values()) if (k.userId === userId) k.revoked = true;
    const key = `sk_${this.rng.token(32)}`;
    this.keys.set(key, { key, userId, name: 'rotated key', revoked: false });
    this.writeListener({ op: 'rotate', at: this.clock.now(), user: userId });
    return key;
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

  private reachableTeam(person: SimPerson, id: string): SimTeam {
    const team = this.teams.get(id);
    if (!team || !this.reach(person).has(id)) throw notFound('Team');
    return team;
  }

  private reachableProject(person: SimPerson, id: string): SimProject {
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

  // ---------------------------------------------------------------- writes and lifecycle

  createRender(person: SimPerson, body: unknown, at = this.clock.now()): V1Render {
    const parsed = CreateRenderBodySchema.safeParse(body);
    if (!parsed.success) {
      throw validation(
        parsed.error.issues.map((i) => {
          const field = i.path.length > 0 ? i.path.join('.') : 'unknown';
          return { field, message: `${field}: ${i.message}`, code: i.code };
        }),
      );
    }
    const b = parsed.data;
    const project = this.reachableProject(person, b.project_id);
    const team = this.teams.get(project.teamId) as SimTeam;
    if (team.credits <= 0) throw new SimHttpError(402, { error: `Team ${team.id} has run out of credits.` });
    let template = null;
    if (b.template_id !== undefined) {
      template = project.templates.find((t) => t.id === b.template_id) ?? null;
      if (!template) throw new SimHttpError(400, { error: `Template ${b.template_id} is not defined by project ${project.id}.` });
    }
    const config: Record<string, unknown> = structuredClone(project.config);
    if (template) {
      for (const f of template.fields)
        config[f.key] = b.values && Object.hasOwn(b.values, f.key) ? structuredClone(b.values[f.key]) : f.default_value;
    }
    const now = at;
    const r: SimRender = {
      id: `rend_${this.rng.token(20).toLowerCase()}`,
      seq: this.seq++,
      name: b.name,
      status: 'initializing',
      type: 'cloud',
      projectId: project.id,
      teamId: team.id,
      createdBy: person.id,
      createdAt: now,
      updatedAt: null,
      variants: ['master', '1080p', '720p', '360p', 'still'],
      config,
      templateId: template?.id ?? null,
      pending: scheduleFrom('initializing', now, b.name.includes('[sim:fail]')),
    };
    this.addRender(r);
    this.writeListener({ op: 'render', at, person: person.id, body });
    return this.renderView(r);
  }

  /** Applies every transition due by `now` (the clock's time unless given), in time order, and reports each one. */
  tick(now = this.clock.now()): number {
    const due: { r: SimRender; to: RenderStatus; at: number }[] = [];
    for (const r of this.active) for (const p of r.pending) if (p.at <= now) due.push({ r, to: p.status, at: p.at });
    due.sort((a, b) => a.at - b.at || a.r.seq - b.r.seq);
    for (const d of due) {
      const from = d.r.status;
      d.r.pending.shift();
      d.r.status = d.to;
      d.r.updatedAt = d.at;
      if (d.to === 'complete') {
        const team = this.teams.get(d.r.teamId);
        if (team) team.credits = Math.max(0, team.credits - 1);
        const project = this.projects.get(d.r.projectId);
        if (project) project.hasThumbnail = true;
      }
      if (d.r.pending.length === 0) this.active.delete(d.r);
      this.transitionListener({ render: d.r, from, to: d.to, at: d.at });
    }
    return due.length;
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

  setCredits(teamId: string, credits: number): boolean {
    const t = this.teams.get(teamId);
    if (!t) return false;
    t.credits = credits;
    this.writeListener({ op: 'credits', at: this.clock.now(), team: teamId, credits });
    return true;
  }
}

function requiredString(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.length === 0) throw validation([{ field, message: `${field}: is required`, code: 'too_small' }]);
  return v;
}

export const SimFaultsBodySchema = z.object({
  latency_ms: z.number().int().min(0).max(60_000).optional(),
  rules: z
    .array(
      z.object({
        kind: z.enum(['error500', 'reset', 'rate_limit', 'lost_response']),
        rate: z.number().min(0).max(1).optional(),
        count: z.number().int().min(0).optional(),
        method: z.string().optional(),
        path: z.string().optional(),
        retry_after_s: z.number().int().min(0).optional(),
      }),
    )
    .optional(),
});
