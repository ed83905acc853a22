import type { Rec } from '../../query/compile.js';
import type { V1Project, V1Team, V1TeamMember, V1TemplateSummary } from '../../v1/schemas.js';
import { ordered } from './columns.js';
import type { RecordBuilder } from './records.js';

export interface ProjectEntry {
  project: V1Project;
  templates: readonly V1TemplateSummary[] | null;
  backfilled: boolean;
  /** When the gateway got this copy (its thumbnail URL's lifetime counts from then). */
  seenAt: number;
  /** When its thumbnail URL expires (read from it on first need). */
  expiresAt?: number;
}

/** What the records of a team's projects, templates and account are built from. */
export interface TeamRecordInputs {
  readonly team: V1Team;
  readonly members: readonly V1TeamMember[];
  readonly projects: ReadonlyMap<string, ProjectEntry>;
}

/** The legacy records of one team's projects, templates and account, built on first use and kept until they change. */
export class TeamRecords {
  private projectRecs: Map<string, Rec> | null = null;
  private projectList: Rec[] | null = null;
  private projectUuids: Map<string, string> | null = null;
  private templateList: Rec[] | null = null;
  private templateByUuid: Map<string, { rec: Rec; projectId: string }> | null = null;
  private accountRec: Rec | null = null;

  constructor(private readonly builder: RecordBuilder, private readonly inputs: TeamRecordInputs) {}

  /** The projects or their templates changed. */
  projectsChanged(): void {
    this.projectRecs = null;
    this.projectList = null;
    this.projectUuids = null;
    this.templateList = null;
    this.templateByUuid = null;
  }

  /** The team or its members changed. */
  accountChanged(): void {
    this.accountRec = null;
  }

  private ensureProjects(): void {
    if (this.projectRecs) return;
    this.projectRecs = new Map();
    this.projectUuids = new Map();
    for (const [id, e] of this.inputs.projects) {
      const rec = this.builder.project(e.project);
      this.projectRecs.set(id, rec);
      this.projectUuids.set(rec.id as string, id);
    }
    this.projectList = [...this.projectRecs.values()];
  }

  projectRecords(): Rec[] {
    this.ensureProjects();
    return this.projectList as Rec[];
  }

  projectV1(uuid: string): string | undefined {
    this.ensureProjects();
    return this.projectUuids?.get(uuid);
  }

  projectRecord(v1Id: string): Rec | undefined {
    this.ensureProjects();
    return this.projectRecs?.get(v1Id);
  }

  templateRecords(): Rec[] {
    if (!this.templateList) {
      const out: Rec[] = [];
      this.templateByUuid = new Map();
      for (const e of this.inputs.projects.values()) {
        for (const t of e.templates ?? []) {
          const rec = this.builder.template(t, e.project);
          out.push(rec);
          this.templateByUuid.set(rec.id as string, { rec, projectId: e.project.id });
        }
      }
      this.templateList = out;
    }
    return this.templateList;
  }

  /** A template's record by uuid, and the v1 id of its project (its poster is the project's signed thumbnail). */
  template(uuid: string): { rec: Rec; projectId: string } | undefined {
    this.templateRecords();
    return this.templateByUuid?.get(uuid);
  }

  accountRecord(): Rec {
    this.accountRec ??= this.builder.account(this.inputs.team, this.inputs.members);
    return this.accountRec;
  }

  projectsByKey(n: number): Rec[] {
    return this.projectRecords().slice().sort((a, b) => ordered(a.id as string, b.id as string)).slice(0, n);
  }
}
