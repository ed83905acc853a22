import { describe, expect, it } from 'vitest';
import { itemsOf } from '../../src/exec/answer-parts.js';

/**
 * `itemsOf`: a page's parts given an item at a time, as `for await (…) yield* part` gave them — the parts' generator
 * resumed only once a part is used up (the answer parts give a part's render-data room back when they are resumed), and
 * ended, its `finally` run, when the reader stops early.
 */
describe('itemsOf', () => {
  function recorded(parts: number[][]) {
    const log: string[] = [];
    async function* gen(): AsyncGenerator<readonly number[]> {
      try {
        for (let i = 0; i < parts.length; i++) {
          log.push(`part ${i}`);
          yield parts[i]!;
          log.push(`resumed after ${i}`);
        }
      } finally {
        log.push('finally');
      }
    }
    return { log, items: itemsOf(gen()) };
  }

  it('gives every item in order, empty parts skipped, and ends', async () => {
    const { log, items } = recorded([[1, 2], [], [3], [4, 5, 6]]);
    const out: number[] = [];
    for await (const x of items) out.push(x);
    expect(out).toEqual([1, 2, 3, 4, 5, 6]);
    expect(log.at(-1)).toBe('finally');
  });

  it('resumes the parts only once a part is used up', async () => {
    const { log, items } = recorded([[1, 2], [3]]);
    expect(await items.next()).toEqual({ done: false, value: 1 });
    expect(log).toEqual(['part 0']);
    expect(await items.next()).toEqual({ done: false, value: 2 });
    expect(log).toEqual(['part 0']); // the last item of part 0 read: part 1 not asked for yet
    expect(await items.next()).toEqual({ done: false, value: 3 });
    expect(log).toEqual(['part 0', 'resumed after 0', 'part 1']);
    expect(await items.next()).toEqual({ done: true, value: undefined });
    expect(log).toEqual(['part 0', 'resumed after 0', 'part 1', 'resumed after 1', 'finally']);
  });

  it('a reader stopping early ends the parts: their finally runs, nothing more is read', async () => {
    const { log, items } = recorded([[1, 2], [3], [4]]);
    for await (const x of items) if (x === 2) break;
    expect(log).toEqual(['part 0', 'finally']);
    expect(await items.next()).toEqual({ done: true, value: undefined });
  });

  it('a return() while a next() waits for the next part: that next() and every later one are done', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    async function* slow(): AsyncGenerator<readonly number[]> {
      yield [1];
      await held;
      yield [2, 3];
    }
    const items = itemsOf(slow());
    expect(await items.next()).toEqual({ done: false, value: 1 });
    const pending = items.next(); // waits for the second part
    const stopped = items.return!();
    release();
    expect(await pending).toEqual({ done: true, value: undefined });
    await stopped;
    expect(await items.next()).toEqual({ done: true, value: undefined });
  });

  it('an error of the parts reaches the reader', async () => {
    async function* failing(): AsyncGenerator<readonly number[]> {
      yield [1];
      throw new Error('the store failed');
    }
    const items = itemsOf(failing());
    expect(await items.next()).toEqual({ done: false, value: 1 });
    await expect(items.next()).rejects.toThrow('the store failed');
  });
});
