import type { Mappings } from '../config/mappings.js';
import { uuidV5 } from '../lib/uuid.js';
import type { V1Project, V1Render, V1Team, V1TeamMember, V1TemplateSummary } from '../v1/schemas.js';
import type { IdTranslator } from './ids.js';
import { toLegacyOutput } from './outputs.js';
import { toIso, type TimeUnit } from './time.js';

/** What the translators need besides the v1 object: ids, mappings, the time unit. */
export interface TranslateContext {
  readonly ids: IdTranslator;
  readonly mappings: Mappings;
  readonly timeUnit: TimeUnit;
}

export type Overlay = Readonly<Record<string, unknown>>;

/** The namespace of a render's process_id (a UUID v5 of its v1 id): the migration guide's snippets derive it too. */
export const PROCESS_NAMESPACE = 'a3c1f6d2-6a55-5b1e-8f0e-9c8d7b6a5f40';

/** Whether a render's master file can be downloaded (legacy `download_ready`). */
export function downloadReady(r: Pick<V1Render, 'status' | 'output'>, mappings: Mappings): boolean {
  return r.status === 'complete' && typeof r.output?.[mappings.outputs.master] === 'string';
}

/** A legacy Render record (relations as uuids). */
export function toLegacyRender(
  r: V1Render,
  ctx: TranslateContext,
  extra: { data?: unknown; overlay?: Overlay; projectThumbnail?: string | null; answered?: boolean } = {},
): Record<string, unknown> {
  const status = ctx.mappings.status.toLegacy[r.status];
  const output = r.status === 'complete' ? toLegacyOutput(r.output, ctx.mappings.outputs, extra.projectThumbnail ?? null) : null;
  return {
    // a render that may not be answered (answered: false) does not queue its pair for the store
    id: extra.answered === false ? ctx.ids.derive('render', r.id) : ctx.ids.toLegacy('render', r.id),
    user_created: ctx.ids.toLegacy('user', r.created_by),
    date_created: toIso(r.created_at, ctx.timeUnit),
    date_updated: toIso(r.updated_at, ctx.timeUnit),
    process_id: uuidV5(r.id, PROCESS_NAMESPACE),
    account: ctx.ids.toLegacy('account', r.project.team),
    project: ctx.ids.toLegacy('project', r.project.id),
    title: r.name,
    playback_id: null,
    download_ready: downloadReady(r, ctx.mappings),
    status,
    data: extra.data ?? {},
    output,
    ...extra.overlay,
  };
}

export function toLegacyProject(p: V1Project, ctx: TranslateContext, overlay?: Overlay): Record<string, unknown> {
  return {
    id: ctx.ids.toLegacy('project', p.id),
    user_created: ctx.ids.toLegacy('user', p.created_by),
    date_created: toIso(p.created_at, ctx.timeUnit),
    date_updated: toIso(p.updated_at, ctx.timeUnit),
    poster: p.thumbnail_url,
    title: p.name,
    account: ctx.ids.toLegacy('account', p.team.id),
    status: 'active',
    template_reference: null,
    ...overlay,
  };
}

/** The team's first admin by join date. */
export function teamOwner(members: readonly V1TeamMember[]): string | null {
  const admins = members.filter((m) => m.role === 'admin').sort((a, b) => a.joined_at - b.joined_at || a.id.localeCompare(b.id));
  return admins[0]?.id ?? null;
}

export function toLegacyAccount(
  t: V1Team,
  ownerV1Id: string | null,
  ctx: TranslateContext,
  overlay?: Overlay,
  credits: unknown = null,
): Record<string, unknown> {
  return {
    id: ctx.ids.toLegacy('account', t.id),
    name: t.name,
    owner: ctx.ids.toLegacy('user', ownerV1Id),
    status: 'active',
    render_credits: credits,
    subscriptions: [],
    ...overlay,
  };
}

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Plain text → HTML: escaped, paragraphs on blank lines, <br> on single newlines. */
export function textToHtml(text: string | null): string | null {
  if (text === null) return null;
  const escaped = text.replace(/[&<>"']/g, (c) => ESC[c] as string);
  return escaped
    .split(/\n{2,}/)
    .map((p) => `<p>${p.replace(/\n/g, '<br>')}</p>`)
    .join('');
}

/** Letters NFKD leaves whole, spelled out for a slug (the migration guide's snippets use the table too). */
export const LETTERS: Record<string, string> = {
  ø: 'o',
  Ø: 'o',
  æ: 'ae',
  Æ: 'ae',
  œ: 'oe',
  Œ: 'oe',
  ß: 'ss',
  đ: 'd',
  Đ: 'd',
  ł: 'l',
  Ł: 'l',
  þ: 'th',
  Þ: 'th',
};

export function slugify(name: string): string {
  return name
    .replace(/[øØæÆœŒßđĐłŁþÞ]/g, (c) => LETTERS[c] as string)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export function toLegacyTemplate(t: V1TemplateSummary, project: V1Project, ctx: TranslateContext): Record<string, unknown> {
  return {
    id: ctx.ids.toLegacy('template', t.id),
    date_created: toIso(project.created_at, ctx.timeUnit),
    description: textToHtml(t.description),
    playback_id: null,
    poster: project.thumbnail_url,
    title: t.name,
    slug: slugify(t.name),
    status: 'published',
  };
}
