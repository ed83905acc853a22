import { describe, expect, it } from 'vitest';
import type { OutputsMapping } from '../../src/config/mappings.js';
import { toLegacyOutput } from '../../src/translate/outputs.js';
import { epochMs, toIso } from '../../src/translate/time.js';

describe('epochMs and toIso', () => {
  it('the configured unit wins over the size of the value', () => {
    expect(epochMs(1_000_000_000_000, 's')).toBe(1_000_000_000_000_000);
    expect(epochMs(5, 'ms')).toBe(5);
    expect(epochMs(5, 's')).toBe(5_000);
  });
  it('auto: below 1e11 (by absolute value) seconds, from 1e11 milliseconds', () => {
    expect(epochMs(99_999_999_999, 'auto')).toBe(99_999_999_999_000);
    expect(epochMs(100_000_000_000, 'auto')).toBe(100_000_000_000);
    expect(epochMs(-1_000, 'auto')).toBe(-1_000_000);
    expect(epochMs(-1_000_000_000_000, 'auto')).toBe(-1_000_000_000_000);
    expect(toIso(100_000_000_000, 'auto')).toBe('1973-03-03T09:46:40.000Z');
    expect(toIso(-1_000_000_000_000, 'auto')).toBe('1938-04-24T22:13:20.000Z');
    expect(toIso(0, 'auto')).toBe('1970-01-01T00:00:00.000Z');
  });
  it('a value that is not a finite number is null', () => {
    expect(toIso(Number.NaN, 'auto')).toBeNull();
    expect(toIso(Number.POSITIVE_INFINITY, 'ms')).toBeNull();
    expect(toIso(Number.NEGATIVE_INFINITY, 's')).toBeNull();
  });
});

describe('toLegacyOutput with a hand-written mapping', () => {
  const m: OutputsMapping = {
    master: 'src',
    byName: { high: ['big', 'shared'], medium: ['shared', 'mid'], low: ['tiny'] },
    sizeOrder: ['s4', 's3', 'still', 'skip', 's2', 's1'],
    stills: ['still', 'frame'],
    ignored: ['skip'],
    legacyKeys: ['poster', 'low', 'medium', 'high', 'master'],
  };

  it('a name already used by a higher slot is not used again', () => {
    expect(toLegacyOutput({ src: 'M', shared: 'SH', mid: 'MID' }, m, null)).toEqual({ poster: null, low: null, medium: 'MID', high: 'SH', master: 'M' });
  });

  it('the master is never an encode, even when its name is in byName or sizeOrder', () => {
    const m2 = { ...m, byName: { high: ['src'], medium: [], low: [] }, sizeOrder: ['src', 's1'] };
    expect(toLegacyOutput({ src: 'M', s1: 'S1' }, m2, null)).toEqual({ poster: null, low: null, medium: null, high: 'S1', master: 'M' });
  });

  it('fills the free slots with the rest by size order, skipping stills and ignored variants, whatever the key order', () => {
    expect(toLegacyOutput({ s1: '1', skip: 'X', still: 'ST', s2: '2', s4: '4', s3: '3' }, m, 'thumb')).toEqual({
      poster: 'ST',
      high: '4',
      medium: '3',
      low: '2',
      master: null,
    });
    // a slot taken by name keeps it; the next free ones take the largest remaining
    expect(toLegacyOutput({ s1: '1', s2: '2', tiny: 'T', s3: '3' }, m, null)).toEqual({ poster: null, high: '3', medium: '2', low: 'T', master: null });
  });

  it('the poster is the first still present in the mapping order, else the thumbnail', () => {
    expect(toLegacyOutput({ frame: 'F', still: 'ST' }, m, 'thumb')!.poster).toBe('ST');
    expect(toLegacyOutput({ frame: 'F' }, m, 'thumb')!.poster).toBe('F');
    expect(toLegacyOutput({}, m, 'thumb')).toEqual({ poster: 'thumb', low: null, medium: null, high: null, master: null });
  });
});
