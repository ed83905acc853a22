import { z } from 'zod';
import { CreateRenderBodySchema, type RenderStatus, type V1Render } from '../v1/schemas.js';
import { SimHttpError, validation } from './errors.js';
import { scheduleFrom } from './generator.js';
import type { SimPerson, SimProject, SimRender, SimTeam } from './model.js';
import { WorldReads } from './world-reads.js';

export interface Transition {
  render: SimRender;
  from: RenderStatus;
  to: RenderStatus;
  at: number;
}

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
 * pagination with short pages, lifecycle, credits, template values applied to a copy). The data, reach, views and
 * reads are `WorldReads`'s (`./world-reads.ts`); this adds the writes, the keys' revocation and the lifecycle.
 */
export class World extends WorldReads {
  private transitionListener: (t: Transition) => void = () => {};
  private writeListener: (w: WorldWrite) => void = () => {};

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

  // ---------------------------------------------------------------- keys
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
      // `[sim:stuck]`: created and never moved (v1 sends no event for it: only a read of its project's list finds it)
      pending: b.name.includes('[sim:stuck]') ? [] : scheduleFrom('initializing', now, b.name.includes('[sim:fail]')),
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

  setCredits(teamId: string, credits: number): boolean {
    const t = this.teams.get(teamId);
    if (!t) return false;
    t.credits = credits;
    this.writeListener({ op: 'credits', at: this.clock.now(), team: teamId, credits });
    return true;
  }
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
