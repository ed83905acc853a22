import { toIso } from '../translate/time.js';
import {
  downloadReady, teamOwner, toLegacyAccount, toLegacyProject, toLegacyRender, toLegacyTemplate, type Overlay, type TranslateContext,
} from '../translate/records.js';
import type { RecordBuilder } from './team-index.js';

/** Overlays per resource type (v1 id → field values the gateway keeps), as the index reads them now. */
export type Overlays = Readonly<Record<string, ReadonlyMap<string, Record<string, unknown>>>>;

/**
 * The index's records are the live path's records: the same translators, the same overlays and credits. The pieces a
 * render's scan fields are built from (status, dates, ids) are the translators' own, so a record read from the index's
 * columns equals the one `render` builds (held equal by test/replica/columns.test.ts).
 */
export function recordBuilder(ctx: TranslateContext, overlays: () => Overlays, credits: Readonly<Record<string, unknown>>): RecordBuilder {
  const overlay = (type: string, id: string) => overlays()[type]?.get(id) as Overlay | undefined;
  const render = ctx.mappings.schemas.render;
  return {
    uuid: (type, v1Id) => ctx.ids.derive(type, v1Id),
    legacyId: (type, v1Id) => ctx.ids.toLegacy(type, v1Id),
    status: (s) => ctx.mappings.status.toLegacy[s],
    iso: (t) => toIso(t, ctx.timeUnit),
    downloadReady: (r) => downloadReady(r, ctx.mappings),
    hasOverlay: (type, id) => overlay(type, id) !== undefined,
    renderFields: render ? Object.keys(render.fields) : [],
    render: (r, data, project) =>
      toLegacyRender(r, ctx, { data, overlay: overlay('render', r.id), projectThumbnail: project?.thumbnail_url ?? null, answered: false }),
    project: (p) => toLegacyProject(p, ctx, overlay('project', p.id)),
    account: (t, members) => toLegacyAccount(t, teamOwner(members), ctx, overlay('account', t.id), credits[t.id] ?? null),
    template: (t, p) => toLegacyTemplate(t, p, ctx),
  };
}
