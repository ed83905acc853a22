import { describe, expect, it } from 'vitest';
import { chooseTemplate, renderName } from '../../src/write/template-choice.js';

const T = [
  { id: 'tpl_a', keys: ['title', 'subtitle'] },
  { id: 'tpl_b', keys: ['title', 'subtitle', 'color', 'logo_url'] },
  { id: 'tpl_c', keys: ['headline', 'price'] },
  { id: 'tpl_d', keys: ['headline', 'price'] },
];

describe('template choice', () => {
  it.each([
    [{ title: 'x', color: 'red' }, 'tpl_b'],
    [{ title: 'x' }, 'tpl_a'], // tie: the first the project defines
    [{ headline: 1, price: 2 }, 'tpl_c'],
    [{ nothing: 1 }, null],
    [{}, null],
  ])('%j → %s', (data, expected) => expect(chooseTemplate(data, T).templateId).toBe(expected));
  it('an explicit rule wins', () => expect(chooseTemplate({ headline: 1 }, T, 'tpl_z').templateId).toBe('tpl_z'));
});

describe('render name', () => {
  const now = new Date('2026-01-02T03:04:05.000Z');
  it('is title, else data.title, else "<project title> <ISO time>", cut to 250 characters', () => {
    expect(renderName('T', { title: 'D' }, 'P', now)).toBe('T');
    expect(renderName(undefined, { title: 'D' }, 'P', now)).toBe('D');
    expect(renderName('  ', { title: 5 }, 'P', now)).toBe('P 2026-01-02T03:04:05.000Z');
    expect(renderName('é'.repeat(300), {}, 'P', now)).toHaveLength(250);
    expect([...renderName('🎬'.repeat(300), {}, 'P', now)]).toHaveLength(250);
  });
});
