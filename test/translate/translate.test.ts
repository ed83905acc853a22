import { describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { derivedUuid } from '../../src/translate/ids.js';
import { toLegacyOutput } from '../../src/translate/outputs.js';
import { slugify, teamOwner, textToHtml } from '../../src/translate/records.js';
import { toIso } from '../../src/translate/time.js';

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
  it('derives stable uuids per type (UUID v5), different across types', () => {
    expect(derivedUuid('render', 'rend_1')).toBe(derivedUuid('render', 'rend_1'));
    expect(derivedUuid('render', 'rend_1')).not.toBe(derivedUuid('project', 'rend_1'));
    expect(derivedUuid('render', 'rend_1')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
