/** One ordered source of a k-way merge (a RenderStream is one): `head` without waiting, `peek` fetching. */
export interface MergeSource<T> {
  head(): T | undefined;
  peek(): Promise<T | undefined>;
  shift(): T | undefined;
}

interface Slot<T> { readonly src: MergeSource<T>; key: number }

/**
 * Merges sources that are each already ordered by `key` (descending when `desc`), yielding the items
 * of one key value at a time, so the caller can order ties by its own rule. A binary heap of the
 * sources' heads makes each item O(log k) and allocates nothing per item beyond the yielded group;
 * a source is awaited only when its buffer runs dry. Stopping the iteration stops all fetching.
 */
export async function* mergeByKey<T>(sources: readonly MergeSource<T>[], key: (item: T) => number, desc: boolean): AsyncGenerator<T[]> {
  const first = (a: number, b: number) => (desc ? a > b : a < b);
  const heap: Slot<T>[] = [];
  const up = (i: number) => {
    const s = heap[i] as Slot<T>;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const ps = heap[p] as Slot<T>;
      if (!first(s.key, ps.key)) break;
      heap[i] = ps;
      i = p;
    }
    heap[i] = s;
  };
  const down = (i: number) => {
    const s = heap[i] as Slot<T>;
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && first((heap[r] as Slot<T>).key, (heap[l] as Slot<T>).key) ? r : l;
      if (!first((heap[c] as Slot<T>).key, s.key)) break;
      heap[i] = heap[c] as Slot<T>;
      i = c;
    }
    heap[i] = s;
  };
  const heads = await Promise.all(sources.map((s) => s.peek()));
  sources.forEach((src, i) => {
    const h = heads[i];
    if (h !== undefined) { heap.push({ src, key: key(h) }); up(heap.length - 1); }
  });
  while (heap.length > 0) {
    const k = (heap[0] as Slot<T>).key;
    const group: T[] = [];
    while (heap.length > 0 && (heap[0] as Slot<T>).key === k) {
      const top = heap[0] as Slot<T>;
      group.push(top.src.shift() as T);
      const next = top.src.head() ?? (await top.src.peek());
      if (next !== undefined) {
        top.key = key(next);
        down(0);
      } else {
        const last = heap.pop() as Slot<T>;
        if (heap.length > 0) { heap[0] = last; down(0); }
      }
    }
    yield group;
  }
}
