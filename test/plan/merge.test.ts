import { describe, expect, it } from 'vitest';
import { mergeByKey, type MergeSource } from '../../src/plan/merge.js';

/** A source over fixed pages: each page is "fetched" (asynchronously) only when the buffer runs dry. */
class PagedSource implements MergeSource<number> {
  private buffer: number[] = [];
  private next = 0;
  fetched = 0;
  constructor(private readonly pages: number[][]) {}
  head(): number | undefined { return this.buffer[0]; }
  async peek(): Promise<number | undefined> {
    while (this.buffer.length === 0 && this.next < this.pages.length) {
      await new Promise((r) => setImmediate(r));
      this.buffer.push(...(this.pages[this.next++] as number[]));
      this.fetched++;
    }
    return this.buffer[0];
  }
  shift(): number | undefined { return this.buffer.shift(); }
}

const collect = async (sources: MergeSource<number>[], desc: boolean) => {
  const groups: number[][] = [];
  for await (const g of mergeByKey(sources, (x) => x, desc)) groups.push(g);
  return groups;
};

/** A deterministic pseudo-random sequence (no flaky seeds). */
function* lcg(seed: number): Generator<number> {
  let s = seed;
  for (;;) { s = (s * 1103515245 + 12345) % 2 ** 31; yield s; }
}

describe('k-way merge by key', () => {
  it('merges descending sources into one descending sequence, ties yielded together', async () => {
    const groups = await collect([new PagedSource([[9, 7], [7, 3]]), new PagedSource([[8, 7, 1]]), new PagedSource([]), new PagedSource([[9]])], true);
    expect(groups).toEqual([[9, 9], [8], [7, 7, 7], [3], [1]]);
  });

  it('merges ascending sources', async () => {
    expect((await collect([new PagedSource([[1, 4], [6]]), new PagedSource([[2, 3, 5]])], false)).flat()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('equals a sort of everything, for many random sources with short and empty pages', async () => {
    const rnd = lcg(42);
    for (let trial = 0; trial < 50; trial++) {
      const all: number[] = [];
      const sources = Array.from({ length: 1 + ((rnd.next().value as number) % 30) }, () => {
        const items = Array.from({ length: (rnd.next().value as number) % 40 }, () => (rnd.next().value as number) % 100).sort((a, b) => b - a);
        all.push(...items);
        const pages: number[][] = [];
        for (let i = 0; i < items.length;) { const n = (rnd.next().value as number) % 7; pages.push(items.slice(i, i + n)); i += n; }
        return new PagedSource(pages);
      });
      const groups = await collect(sources, true);
      expect(groups.flat()).toEqual(all.sort((a, b) => b - a));
      for (const g of groups) expect(new Set(g).size).toBe(1);
      expect(new Set(groups.map((g) => g[0])).size).toBe(groups.length);
    }
  });

  it('fetches no further page once the caller stops', async () => {
    const a = new PagedSource([[10, 9], [8, 7], [6]]);
    const b = new PagedSource([[5], [4]]);
    const seen: number[] = [];
    for await (const g of mergeByKey([a, b], (x) => x, true)) { seen.push(...g); if (seen.length === 2) break; }
    expect(seen).toEqual([10, 9]);
    // a's second page is only needed to know what follows 9: it is read then; its third page never is
    expect(a.fetched).toBe(2);
    expect(b.fetched).toBe(1);
  });
});
