import { describe, expect, it } from 'vitest';
import { runBatch } from '../../src/write/batch.js';

/** Issue 38: an array body is capped (MAX_BATCH_MUTATION) and a batch stops making items once its client has gone. */
const ok = (id: string) => ({ answer: { status: 200, body: { data: { id } } }, id });

describe('runBatch bounds', () => {
  it('refuses an array longer than the cap with 400 INVALID_PAYLOAD before checking or making any item', async () => {
    let checked = 0;
    let made = 0;
    const items = Array.from({ length: 4 }, (_, i) => `i${i}`);
    await expect(runBatch(items, () => { checked++; }, async (x) => { made++; return ok(x as string); }, { max: 3 }))
      .rejects.toMatchObject({ code: 'INVALID_PAYLOAD', status: 400, message: 'Invalid payload. Exceeded max batch mutation limit of 3.' });
    expect([checked, made]).toEqual([0, 0]);
    expect((await runBatch(items.slice(0, 3), () => undefined, async (x) => ok(x as string), { max: 3 })).status).toBe(200);
  });

  it('stops making items once its client has gone, answering with the uuids already made', async () => {
    const gone = new AbortController();
    const made: string[] = [];
    const a = await runBatch(['a', 'b', 'c', 'd'], () => undefined, async (x) => {
      made.push(x as string);
      if (x === 'b') gone.abort(); // the client leaves while the second item is being made
      return ok(x as string);
    }, { gone: gone.signal });
    expect(made).toEqual(['a', 'b']);
    expect(a.status).toBe(503);
    expect((a.body as { errors: { extensions: Record<string, unknown> }[] }).errors[0]!.extensions).toMatchObject({ created: ['a', 'b'], failed_item: 2 });
  });
});
