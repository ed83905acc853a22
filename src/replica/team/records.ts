import { toIso } from '../../translate/time.js';
import {
  downloadReady, teamOwner, toLegacyAccount, toLegacyProject, toLegacyRender, toLegacyTemplate, type Overlay, type TranslateContext,
} from '../../translate/records.js';
import type { Rec } from '../../query/compile.js';
import type { IdType } from '../../translate/ids.js';
import type { RenderStatus, V1Project, V1Render, V1Team, V1TeamMember, V1TemplateSummary } from '../../v1/schemas.js';

/** Builds the legacy records of the replica (translation lives in src/translate; this only says what to call). */
export interface RecordBuilder {
  /** The legacy uuid of a v1 id (without recording the pair: answered records are recorded by the reader). */
  uuid(type: 'render' | 'project' | 'account' | 'template', v1Id: string): string;
  /** The imported legacy uuid of a v1 id (undefined when its uuid is the one derived from it). */
  importedUuid(type: IdType, v1Id: string): string | undefined;
  /** The legacy uuid a record shows for a v1 id (as the translators answer it). */
  legacyId(type: IdType, v1Id: string): string;
  status(s: RenderStatus): unknown;
  iso(t: number | null): string | null;
  downloadReady(r: Pick<V1Render, 'status' | 'output'>): boolean;
  hasOverlay(type: string, v1Id: string): boolean;
  /** The field values the gateway keeps for a v1 id (its overlay), if any. */
  overlayOf(type: string, v1Id: string): Readonly<Record<string, unknown>> | undefined;
  /** The fields of a legacy render (every one is readable on a record of the replica). */
  readonly renderFields: readonly string[];
  render(r: V1Render, data: unknown, project: V1Project | undefined): Rec;
  project(p: V1Project): Rec;
  account(t: V1Team, members: readonly V1TeamMember[]): Rec;
  template(t: V1TemplateSummary, p: V1Project): Rec;
}

/** Overlays per resource type (v1 id → field values the gateway keeps), as the replica reads them now. */
export type Overlays = Readonly<Record<string, ReadonlyMap<string, Record<string, unknown>>>>;

/**
 * The replica's records are the live path's records: the same translators, the same overlays and credits. The pieces a
 * render's scan fields are built from (status, dates, ids) are the translators' own, so a record read from the replica's
 * columns equals the one `render` builds (held equal by test/replica/team-replica.test.ts).
 */
export function recordBuilder(ctx: TranslateContext, overlays: () => Overlays, credits: Readonly<Record<string, unknown>>): RecordBuilder {
  const overlay = (type: string, id: string) => overlays()[type]?.get(id) as Overlay | undefined;
  const render = ctx.mappings.schemas.render;
  return {
    uuid: (type, v1Id) => ctx.ids.derive(type, v1Id),
    importedUuid: (type, v1Id) => ctx.ids.imported(type, v1Id),
    legacyId: (type, v1Id) => ctx.ids.toLegacy(type, v1Id),
    status: (s) => ctx.mappings.status.toLegacy[s],
    iso: (t) => toIso(t, ctx.timeUnit),
    downloadReady: (r) => downloadReady(r, ctx.mappings),
    hasOverlay: (type, id) => overlay(type, id) !== undefined,
    overlayOf: (type, id) => overlay(type, id),
    renderFields: render ? Object.keys(render.fields) : [],
    render: (r, data, project) =>
      toLegacyRender(r, ctx, { data, overlay: overlay('render', r.id), projectThumbnail: project?.thumbnail_url ?? null, answered: false }),
    project: (p) => toLegacyProject(p, ctx, overlay('project', p.id)),
    account: (t, members) => toLegacyAccount(t, teamOwner(members), ctx, overlay('account', t.id), credits[t.id] ?? null),
    template: (t, p) => toLegacyTemplate(t, p, ctx),
  };
}
