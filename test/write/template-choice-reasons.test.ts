import { describe, expect, it } from 'vitest';
import { chooseTemplate, renderName } from '../../src/write/template-choice.js';

describe('chooseTemplate: the reason it gives', () => {
  const T = [
    { id: 'tpl_a', keys: ['title'] },
    { id: 'tpl_b', keys: ['title', 'color', 'logo'] },
  ];
  it('names the rule, the coverage, or that nothing covers the data', () => {
    expect(chooseTemplate({ title: 1 }, T, 'tpl_z')).toEqual({ templateId: 'tpl_z', reason: 'explicit project → template rule in mappings/writes.json' });
    expect(chooseTemplate({ title: 1, color: 2, other: 3 }, T)).toEqual({ templateId: 'tpl_b', reason: 'covers 2 of 3 data keys' });
    expect(chooseTemplate({ other: 3 }, T)).toEqual({ templateId: null, reason: 'no template covers any data key' });
    expect(chooseTemplate({ title: 1 }, [])).toEqual({ templateId: null, reason: 'no template covers any data key' });
  });
  it('an empty rule is no rule', () => {
    expect(chooseTemplate({ title: 1 }, T, '').templateId).toBe('tpl_a');
  });
  it('a later template must cover strictly more to win', () => {
    expect(chooseTemplate({ title: 1, color: 2 }, [{ id: 'x', keys: ['color'] }, { id: 'y', keys: ['title'] }, { id: 'z', keys: ['title', 'color'] }]).templateId).toBe('z');
    expect(chooseTemplate({ title: 1, color: 2 }, [{ id: 'z', keys: ['title', 'color'] }, { id: 'x', keys: ['color', 'title', 'more'] }]).templateId).toBe('z');
  });
});

describe('renderName: blanks', () => {
  const now = new Date('2026-01-02T03:04:05.000Z');
  it('a blank data.title, or a title that is not a string, falls through to the project name and time', () => {
    expect(renderName(undefined, { title: ' \n ' }, 'P', now)).toBe('P 2026-01-02T03:04:05.000Z');
    expect(renderName(42, { title: 'D' }, 'P', now)).toBe('D');
    expect(renderName('', {}, 'P', now)).toBe('P 2026-01-02T03:04:05.000Z');
  });
  it('keeps the title as given (not trimmed), and a short one whole', () => {
    expect(renderName(' T ', {}, 'P', now)).toBe(' T ');
    expect(renderName(undefined, { title: ' D ' }, 'P', now)).toBe(' D ');
    expect(renderName('x'.repeat(250), {}, 'P', now)).toBe('x'.repeat(250));
    expect(renderName('ab'.repeat(200), {}, 'P', now)).toBe('ab'.repeat(125));
  });
});
