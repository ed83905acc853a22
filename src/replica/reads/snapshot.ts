import type { Lookup, Rec } from '../../query/compile.js';
import type { Plan } from '../../plan/plan.js';
import type { TeamReplica } from '../team/team-replica.js';

/**
 * The teams a request may read, as the replica holds them: the records of each resource and a synchronous Lookup for
 * relations (nothing outside these teams can be reached, so a miss is an answer, not a fetch).
 */
export class ReplicaSnapshot implements Lookup {
  constructor(readonly teams: readonly TeamReplica[], readonly nestedLimit: number) {}

  /** Every record of a resource the request may read (total_count counts these). */
  count(resource: string): number {
    let n = 0;
    for (const t of this.teams) n += resource === 'render' ? t.size : this.of(t, resource).length;
    return n;
  }

  private of(t: TeamReplica, resource: string): readonly Rec[] {
    switch (resource) {
      case 'render': return t.renderRecords();
      case 'project': return t.projectRecords();
      case 'template': return t.templateRecords();
      case 'account': return [t.accountRecord()];
      default: return [];
    }
  }

  /** The records the plan's scope leaves (accounts, projects, ids), in no particular order. */
  scope(resource: string, plan: Plan): Rec[] {
    const teams = this.inScope(plan);
    if (resource === 'render' && plan.ids) {
      const out: Rec[] = [];
      for (const u of new Set(plan.ids.map((x) => x.toLowerCase()))) {
        for (const t of teams) {
          const v1 = t.renderV1(u);
          if (v1) out.push(t.renderRecord(v1) as Rec);
        }
      }
      return out;
    }
    if (resource === 'render' && plan.scope.projects) {
      const out: Rec[] = [];
      for (const u of new Set(plan.scope.projects.map((x) => x.toLowerCase()))) {
        for (const t of teams) {
          const v1 = t.projectV1(u);
          if (v1) for (const r of t.rendersOfProject(v1)) out.push(r);
        }
      }
      return out;
    }
    const out: Rec[] = [];
    for (const t of teams) for (const r of this.of(t, resource)) out.push(r);
    return out;
  }

  /** The records of the plan's scope as one run per team (read, not copied: a scan filters them as it goes). */
  runs(resource: string, plan: Plan): readonly (readonly Rec[])[] {
    if (plan.ids || (resource === 'render' && plan.scope.projects)) return [this.scope(resource, plan)];
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
    for (const t of this.teams) {
      if (resource === 'render') {
        const v1 = t.renderV1(id);
        if (v1) return t.renderRecord(v1);
      } else if (resource === 'project') {
        const v1 = t.projectV1(id);
        if (v1) return t.projectRecord(v1);
      } else if (resource === 'account') {
        const a = t.accountRecord();
        if (a.id === id) return a;
      } else if (resource === 'template') {
        const x = t.template(id);
        if (x) return x.rec;
      }
    }
    return undefined;
  }

  many(_resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[] {
    const id = parent.id as string;
    for (const t of this.teams) {
      if (parentResource === 'project' && field === 'renders') {
        const v1 = t.projectV1(id);
        if (v1) return t.rendersByKey(v1, this.nestedLimit);
      } else if (parentResource === 'account' && t.accountRecord().id === id) {
        if (field === 'renders') return t.rendersByKey(null, this.nestedLimit);
        if (field === 'projects') return t.projectsByKey(this.nestedLimit);
      }
    }
    return [];
  }

  manyAll(_resource: string, parent: Rec, field: string, parentResource: string): readonly Rec[] {
    const id = parent.id as string;
    for (const t of this.teams) {
      if (parentResource === 'project' && field === 'renders') {
        const v1 = t.projectV1(id);
        if (v1) return t.rendersOfProject(v1);
      } else if (parentResource === 'account' && t.accountRecord().id === id) {
        if (field === 'renders') return t.renderRecords();
        if (field === 'projects') return t.projectRecords();
      }
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
