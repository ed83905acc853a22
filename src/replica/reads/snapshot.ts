import type { Lookup, Rec } from '../../query/compile.js';
import { isRecordResource, oneToMany, type OneToMany, type RecordResource } from '../../query/resources.js';
import type { Plan } from '../../plan/plan.js';
import type { TeamReplica } from '../team/team-replica.js';

/** How one team holds each resource's records: every one, how many, and one by its uuid. */
const HELD: Readonly<Record<RecordResource, {
  all(t: TeamReplica): readonly Rec[];
  count(t: TeamReplica): number;
  one(t: TeamReplica, id: string): Rec | undefined;
  /** Those of one project (by its v1 id), when a plan's project scope narrows this resource. */
  ofProject?(t: TeamReplica, project: string): readonly Rec[];
}>> = {
  render: {
    all: (t) => t.renderRecords(), count: (t) => t.size, ofProject: (t, project) => t.rendersOfProject(project),
    one: (t, id) => { const v1 = t.renderV1(id); return v1 ? t.renderRecord(v1) : undefined; },
  },
  project: {
    all: (t) => t.projectRecords(), count: (t) => t.projectRecords().length,
    one: (t, id) => { const v1 = t.projectV1(id); return v1 ? t.projectRecord(v1) : undefined; },
  },
  template: { all: (t) => t.templateRecords(), count: (t) => t.templateRecords().length, one: (t, id) => t.template(id)?.rec },
  account: { all: (t) => [t.accountRecord()], count: () => 1, one: (t, id) => { const a = t.accountRecord(); return a.id === id ? a : undefined; } },
};

/**
 * How one team reaches each one-to-many relation's children of a parent uuid (undefined: the parent is not this team's):
 * the first `n` in primary-key order (a nested list), or every one (a filter's walk, `count()`, `deep`).
 */
const CHILDREN: Readonly<Record<OneToMany, {
  first(t: TeamReplica, parent: string, n: number): readonly Rec[] | undefined;
  all(t: TeamReplica, parent: string): readonly Rec[] | undefined;
}>> = {
  'project.renders': {
    first: (t, id, n) => { const v1 = t.projectV1(id); return v1 ? t.rendersByKey(v1, n) : undefined; },
    all: (t, id) => { const v1 = t.projectV1(id); return v1 ? t.rendersOfProject(v1) : undefined; },
  },
  'account.renders': {
    first: (t, id, n) => (t.accountRecord().id === id ? t.rendersByKey(null, n) : undefined),
    all: (t, id) => (t.accountRecord().id === id ? t.renderRecords() : undefined),
  },
  'account.projects': {
    first: (t, id, n) => (t.accountRecord().id === id ? t.projectsByKey(n) : undefined),
    all: (t, id) => (t.accountRecord().id === id ? t.projectRecords() : undefined),
  },
};

/**
 * The teams a request may read, as the replica holds them: the records of each resource and a synchronous Lookup for
 * relations (nothing outside these teams can be reached, so a miss is an answer, not a fetch).
 */
export class ReplicaSnapshot implements Lookup {
  constructor(readonly teams: readonly TeamReplica[], readonly nestedLimit: number) {}

  /** Every record of a resource the request may read (total_count counts these). */
  count(resource: string): number {
    let n = 0;
    if (isRecordResource(resource)) for (const t of this.teams) n += HELD[resource].count(t);
    return n;
  }

  private of(t: TeamReplica, resource: string): readonly Rec[] {
    return isRecordResource(resource) ? HELD[resource].all(t) : [];
  }

  /** The records the plan's scope leaves (accounts, projects, ids), in no particular order. */
  scope(resource: string, plan: Plan): Rec[] {
    if (!isRecordResource(resource)) return [];
    const held = HELD[resource];
    const teams = this.inScope(plan);
    const out: Rec[] = [];
    if (plan.ids) {
      for (const u of new Set(plan.ids.map((x) => x.toLowerCase()))) {
        for (const t of teams) {
          const r = held.one(t, u);
          if (r) out.push(r);
        }
      }
      return out;
    }
    const { ofProject } = held;
    if (ofProject && plan.scope.projects) {
      for (const u of new Set(plan.scope.projects.map((x) => x.toLowerCase()))) {
        for (const t of teams) {
          const v1 = t.projectV1(u);
          if (v1) for (const r of ofProject(t, v1)) out.push(r);
        }
      }
      return out;
    }
    for (const t of teams) for (const r of held.all(t)) out.push(r);
    return out;
  }

  /** The records of the plan's scope as one run per team (read, not copied: a scan filters them as it goes). */
  runs(resource: string, plan: Plan): readonly (readonly Rec[])[] {
    if (plan.ids || (plan.scope.projects && isRecordResource(resource) && HELD[resource].ofProject)) return [this.scope(resource, plan)];
    return this.inScope(plan).map((t) => this.of(t, resource));
  }

  /** The teams the plan's account scope leaves. */
  inScope(plan: Plan): readonly TeamReplica[] {
    if (!plan.scope.accounts) return this.teams;
    const accounts = new Set(plan.scope.accounts.map((u) => u.toLowerCase()));
    return this.teams.filter((t) => accounts.has(t.accountRecord().id as string));
  }

  /** The v1 ids of project uuids within reach. */
  projectIds(uuids: readonly string[]): Set<string> {
    const out = new Set<string>();
    for (const u of uuids) {
      for (const t of this.teams) {
        const v1 = t.projectV1(u.toLowerCase());
        if (v1) out.add(v1);
      }
    }
    return out;
  }

  /** The answered renders whose pairs the id store has not been given yet: [v1 id, uuid] (each given once). */
  unpaired(uuids: readonly string[]): [string, string][] {
    const out: [string, string][] = [];
    for (const u of uuids) {
      for (const t of this.teams) {
        const v1 = t.unpaired(u);
        if (v1) {
          out.push([v1, u]);
          break;
        }
      }
    }
    return out;
  }

  /** The v1 id of a render uuid within reach. */
  renderV1(uuid: string): string | undefined {
    for (const t of this.teams) {
      const v1 = t.renderV1(uuid);
      if (v1) return v1;
    }
    return undefined;
  }

  one(resource: string, id: string): Rec | undefined {
    if (!isRecordResource(resource)) return undefined;
    for (const t of this.teams) {
      const r = HELD[resource].one(t, id);
      if (r) return r;
    }
    return undefined;
  }

  many(_resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[] {
    const rel = oneToMany(parentResource, field);
    if (!rel) return [];
    for (const t of this.teams) {
      const found = CHILDREN[rel].first(t, parent.id as string, this.nestedLimit);
      if (found) return found;
    }
    return [];
  }

  manyAll(_resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[] {
    const rel = oneToMany(parentResource, field);
    if (!rel) return [];
    for (const t of this.teams) {
      const found = CHILDREN[rel].all(t, parent.id as string);
      if (found) return found;
    }
    return [];
  }

  /** Milliseconds since the least recently synced team of the snapshot was synced. */
  ageMs(now: number): number {
    let oldest = now;
    for (const t of this.teams) oldest = Math.min(oldest, t.syncedAt ?? 0);
    return now - oldest;
  }
}
