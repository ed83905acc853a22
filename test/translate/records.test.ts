import { describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { uuidV5 } from '../../src/lib/uuid.js';
import type { IdMapStore, IdPair } from '../../src/store/idmap.js';
import { derivedUuid, IdTranslator } from '../../src/translate/ids.js';
import {
  downloadReady,
  slugify,
  teamOwner,
  textToHtml,
  toLegacyAccount,
  toLegacyProject,
  toLegacyRender,
  toLegacyTemplate,
  type TranslateContext,
} from '../../src/translate/records.js';
import type { V1Project, V1Render, V1Team, V1TemplateSummary } from '../../src/v1/schemas.js';

const mappings = loadMappings('mappings');
/** The process namespace of the legacy `process_id` (pinned: clients store these). */
const PROCESS_NAMESPACE = 'a3c1f6d2-6a55-5b1e-8f0e-9c8d7b6a5f40';

function context(timeUnit: TranslateContext['timeUnit'] = 'auto') {
  const remembered: IdPair[] = [];
  const store = { imported: async () => [], remember: async (b: readonly IdPair[]) => void remembered.push(...b) };
  const ids = new IdTranslator(store as unknown as IdMapStore);
  return { ctx: { ids, mappings, timeUnit } satisfies TranslateContext, remembered };
}

const render = (over: Partial<V1Render> = {}): V1Render => ({
  id: 'rend_1',
  name: 'Spring promo',
  status: 'complete',
  type: 'video',
  project: { id: 'proj_1', team: 'team_1' },
  output: { master: 'https://cdn/m', '1080p': 'https://cdn/1080', still: 'https://cdn/s' },
  created_by: 'user_1',
  created_at: 1_700_000_000,
  updated_at: 1_700_000_100,
  ...over,
} as V1Render);

const project: V1Project = {
  id: 'proj_1',
  name: 'Project one',
  team: { id: 'team_1', name: 'Team one' },
  created_by: 'user_2',
  thumbnail_url: 'https://cdn/thumb',
  created_at: 1_600_000_000_000,
  updated_at: null,
};

describe('downloadReady', () => {
  it('is true only for a complete render with a master URL', () => {
    expect(downloadReady({ status: 'complete', output: { master: 'u' } }, mappings)).toBe(true);
    expect(downloadReady({ status: 'processing', output: { master: 'u' } }, mappings)).toBe(false);
    expect(downloadReady({ status: 'complete', output: { '1080p': 'u' } }, mappings)).toBe(false);
    expect(downloadReady({ status: 'complete', output: undefined }, mappings)).toBe(false);
  });
});

describe('toLegacyRender', () => {
  it('translates every field of a complete render and queues its pairs', async () => {
    const { ctx, remembered } = context();
    const r = toLegacyRender(render(), ctx, { data: { a: 1 } });
    expect(r).toEqual({
      id: derivedUuid('render', 'rend_1'),
      user_created: derivedUuid('user', 'user_1'),
      date_created: '2023-11-14T22:13:20.000Z',
      date_updated: '2023-11-14T22:15:00.000Z',
      process_id: uuidV5('rend_1', PROCESS_NAMESPACE),
      account: derivedUuid('account', 'team_1'),
      project: derivedUuid('project', 'proj_1'),
      title: 'Spring promo',
      playback_id: null,
      download_ready: true,
      status: 'complete',
      data: { a: 1 },
      output: { poster: 'https://cdn/s', low: null, medium: null, high: 'https://cdn/1080', master: 'https://cdn/m' },
    });
    expect(r.process_id).not.toBe(r.id);
    await ctx.ids.flush();
    expect(remembered.map((p) => p.type).sort()).toEqual(['account', 'project', 'render', 'user']);
  });

  it('uses the time unit, maps the status, leaves output null until complete, data {} by default', () => {
    const { ctx } = context('ms');
    const r = toLegacyRender(render({ status: 'finalizing', created_by: null, updated_at: null, created_at: 1_700_000_000_000 }), ctx);
    expect(r).toMatchObject({ status: 'encoding', output: null, download_ready: false, data: {}, user_created: null, date_updated: null, date_created: '2023-11-14T22:13:20.000Z' });
  });

  it("gives the project's thumbnail as poster when there is no still; an overlay wins over every field", () => {
    const { ctx } = context();
    const r = toLegacyRender(render({ output: { master: 'https://cdn/m' } }), ctx, { projectThumbnail: 'https://cdn/thumb', overlay: { title: 'Overlaid', status: 'x' } });
    expect((r.output as { poster: string }).poster).toBe('https://cdn/thumb');
    expect(r.title).toBe('Overlaid');
    expect(r.status).toBe('x');
    expect((toLegacyRender(render({ output: { master: 'https://cdn/m' } }), ctx).output as { poster: unknown }).poster).toBeNull();
  });

  it('a render that may not be answered queues no pair for itself (answered: false)', async () => {
    const { ctx, remembered } = context();
    const r = toLegacyRender(render({ id: 'rend_2' }), ctx, { answered: false });
    expect(r.id).toBe(derivedUuid('render', 'rend_2'));
    await ctx.ids.flush();
    expect(remembered.some((p) => p.type === 'render')).toBe(false);
    toLegacyRender(render({ id: 'rend_3' }), ctx, { answered: true });
    await ctx.ids.flush();
    expect(remembered.filter((p) => p.type === 'render').map((p) => p.v1Id)).toEqual(['rend_3']);
  });
});

describe('toLegacyProject', () => {
  it('translates every field; an overlay wins', () => {
    const { ctx } = context();
    expect(toLegacyProject(project, ctx)).toEqual({
      id: derivedUuid('project', 'proj_1'),
      user_created: derivedUuid('user', 'user_2'),
      date_created: '2020-09-13T12:26:40.000Z',
      date_updated: null,
      poster: 'https://cdn/thumb',
      title: 'Project one',
      account: derivedUuid('account', 'team_1'),
      status: 'active',
      template_reference: null,
    });
    expect(toLegacyProject(project, ctx, { title: 'Renamed' }).title).toBe('Renamed');
  });
});

describe('toLegacyAccount', () => {
  const team: V1Team = { id: 'team_1', name: 'Team one', account_id: 'acc_1', role: 'admin', created_at: 1 };
  it('translates every field, owner and credits as given; an overlay wins', () => {
    const { ctx } = context();
    expect(toLegacyAccount(team, 'user_3', ctx)).toEqual({
      id: derivedUuid('account', 'team_1'),
      name: 'Team one',
      owner: derivedUuid('user', 'user_3'),
      status: 'active',
      render_credits: null,
      subscriptions: [],
    });
    expect(toLegacyAccount(team, null, ctx, { name: 'Renamed' }, { left: 5 })).toMatchObject({ owner: null, name: 'Renamed', render_credits: { left: 5 } });
  });
});

describe('toLegacyTemplate', () => {
  it("takes dates and poster from the project, the description as HTML, a slug from the name", () => {
    const { ctx } = context();
    const t: V1TemplateSummary = { id: 'tpl_1', name: 'Big Sale!', description: 'One\n\nTwo', project_id: 'proj_1', target_composition_id: 'c', field_count: 2 };
    expect(toLegacyTemplate(t, project, ctx)).toEqual({
      id: derivedUuid('template', 'tpl_1'),
      date_created: '2020-09-13T12:26:40.000Z',
      description: '<p>One</p><p>Two</p>',
      playback_id: null,
      poster: 'https://cdn/thumb',
      title: 'Big Sale!',
      slug: 'big-sale',
      status: 'published',
    });
  });
});

describe('textToHtml', () => {
  it('escapes every special character, including the apostrophe and each repeat', () => {
    expect(textToHtml(`it's <a> & <b>`)).toBe('<p>it&#39;s &lt;a&gt; &amp; &lt;b&gt;</p>');
  });
  it('splits paragraphs on two or more newlines, and breaks every single newline', () => {
    expect(textToHtml('a\nb\nc\n\n\nd')).toBe('<p>a<br>b<br>c</p><p>d</p>');
    expect(textToHtml('')).toBe('<p></p>');
  });
});

describe('slugify', () => {
  it('spells out letters that do not decompose', () => {
    expect(slugify('øØæÆœŒßđĐłŁþÞ')).toBe('ooaeaeoeoessddllthth');
    expect(slugify('Łódź Straße')).toBe('lodz-strasse');
  });
  it('joins words with one dash and trims dashes at both ends', () => {
    expect(slugify('--Hello,   World!--')).toBe('hello-world');
    expect(slugify('  a  ')).toBe('a');
    expect(slugify('!!!')).toBe('');
  });
});

describe('teamOwner', () => {
  it('breaks a join-date tie by id; members are never owners', () => {
    expect(teamOwner([
      { id: 'user_z', email: null, created_at: 1, role: 'admin', joined_at: 2 },
      { id: 'user_m', email: null, created_at: 1, role: 'member', joined_at: 1 },
      { id: 'user_b', email: null, created_at: 1, role: 'admin', joined_at: 2 },
    ])).toBe('user_b');
    expect(teamOwner([{ id: 'user_m', email: null, created_at: 1, role: 'member', joined_at: 1 }])).toBeNull();
  });
});
