import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { derivedUuid } from '../../src/translate/ids.js';
import { toLegacyOutput } from '../../src/translate/outputs.js';
import { slugify, teamOwner, textToHtml } from '../../src/translate/records.js';
import { toIso } from '../../src/translate/time.js';

/** The uuids the gateway has answered since its first release for these v1 ids (written down once, never recomputed). */
const PINNED = {
  render: '594b1139-4eb9-5341-bca4-0f74e1b01a91',
  project: '2f4e3b1f-bd33-5512-858f-58ddb672c8f4',
  account: 'b8076ac8-d017-585f-bc64-ad0df353900f',
  template: '9467ed93-07aa-5358-9e11-eaba7389b3d7',
  user: 'e1562d26-2786-5d12-9e00-5d7628d6530c',
} as const;

const m = loadMappings('mappings');

describe('timestamps', () => {
  it('turns v1 seconds or milliseconds into ISO 8601 with milliseconds and Z; null stays null', () => {
    expect(toIso(1_700_000_000, 'auto')).toBe('2023-11-14T22:13:20.000Z');
    expect(toIso(1_700_000_000_123, 'auto')).toBe('2023-11-14T22:13:20.123Z');
    expect(toIso(1_700_000_000, 's')).toBe('2023-11-14T22:13:20.000Z');
    expect(toIso(1_700_000_000, 'ms')).toBe('1970-01-20T16:13:20.000Z');
    expect(toIso(null, 'auto')).toBeNull();
  });
});

describe('output variants', () => {
  const url = (v: string) => `https://cdn/${v}?sig=1`;
  it('maps master, the encodes by name, and the poster from a still', () => {
    expect(toLegacyOutput({ master: url('m'), '1080p': url('1080'), '720p': url('720'), '360p': url('360'), still: url('s'), gif_preview: url('g') }, m.outputs, url('thumb')))
      .toEqual({ poster: url('s'), low: url('360'), medium: url('720'), high: url('1080'), master: url('m') });
  });
  it('fills the remaining slots by size order, ignores unmapped variants, leaves missing keys null', () => {
    expect(toLegacyOutput({ master: url('m'), '2160p': url('4k'), '540p': url('540'), weird: url('w') }, m.outputs, null))
      .toEqual({ poster: null, low: null, medium: url('540'), high: url('4k'), master: url('m') });
  });
  it('uses the project thumbnail when there is no still; null without output', () => {
    expect(toLegacyOutput({ master: url('m') }, m.outputs, url('thumb'))!.poster).toBe(url('thumb'));
    expect(toLegacyOutput(undefined, m.outputs, url('thumb'))).toBeNull();
  });
});

describe('derived fields', () => {
  it('escapes plain text into HTML paragraphs', () => {
    expect(textToHtml('a <b> & "c"\nline\n\nnext')).toBe('<p>a &lt;b&gt; &amp; &quot;c&quot;<br>line</p><p>next</p>');
    expect(textToHtml(null)).toBeNull();
  });
  it('slugs names', () => expect(slugify('Ünïcødé Café — 2 <Promo>!')).toBe('unicode-cafe-2-promo'));
  it('names the first admin by join date as owner', () => {
    expect(teamOwner([
      { id: 'user_b', email: null, created_at: 1, role: 'admin', joined_at: 5 },
      { id: 'user_a', email: null, created_at: 1, role: 'member', joined_at: 1 },
      { id: 'user_c', email: null, created_at: 1, role: 'admin', joined_at: 3 },
    ])).toBe('user_c');
    expect(teamOwner([])).toBeNull();
  });
  it('derives stable uuids per type (UUID v5), different across types: pinned vectors', () => {
    // every uuid a client ever stored depends on these: a change of namespace must fail here
    expect(derivedUuid('render', 'rend_1')).toBe(PINNED.render);
    expect(derivedUuid('project', 'proj_1')).toBe(PINNED.project);
    expect(derivedUuid('account', 'team_1')).toBe(PINNED.account);
    expect(derivedUuid('template', 'tpl_1')).toBe(PINNED.template);
    expect(derivedUuid('user', 'user_1')).toBe(PINNED.user);
    // and the construction, recomputed here by the RFC 9562 recipe with node:crypto's SHA-1
    const v5 = (name: string, ns: string) => {
      const h = createHash('sha1').update(Buffer.from(ns.replace(/-/g, ''), 'hex')).update(name, 'utf8').digest();
      h[6] = (h[6]! & 0x0f) | 0x50;
      h[8] = (h[8]! & 0x3f) | 0x80;
      const x = h.subarray(0, 16).toString('hex');
      return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
    };
    const root = '6f1d7c1e-3b0a-5b57-9c1e-0d6c2b7f4a10';
    expect(derivedUuid('render', 'rend_1')).toBe(v5('rend_1', v5('legacy-gateway:render', root)));
    expect(derivedUuid('render', 'rend_1')).not.toBe(derivedUuid('project', 'rend_1'));
    expect(derivedUuid('render', 'rend_1')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
