import { describe, expect, it } from 'vitest';
import { errors } from '../../src/errors/catalog.js';
import { asAnswer } from '../../src/write/idempotency.js';
import { itemKey, runBatch } from '../../src/write/batch.js';

const ok = (id: string) => ({ answer: { status: 200, body: { data: { id, title: `t-${id}` } } }, id });

describe('runBatch: an array body', () => {
  it('answers every item in primary-key order, not the order sent', async () => {
    const ids = ['c0000000-0000-4000-8000-000000000000', 'a0000000-0000-4000-8000-000000000000', 'b0000000-0000-4000-8000-000000000000'];
    const made: number[] = [];
    const a = await runBatch(ids, () => undefined, async (item, i) => { made.push(i); return ok(item as string); });
    expect(made).toEqual([0, 1, 2]);
    expect(a).toEqual({ status: 200, body: { data: [...ids].sort().map((id) => ({ id, title: `t-${id}` })) } });
  });

  it('checks every item before making any: a refused item makes nothing', async () => {
    let calls = 0;
    await expect(runBatch(['a', 'b'], (item) => { if (item === 'b') throw errors.forbidden(); }, async () => { calls++; return ok('x'); }))
      .rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(calls).toBe(0);
  });

  it('stops at the first failure and answers it with the uuids already made', async () => {
    let calls = 0;
    const a = await runBatch(['a', 'b', 'c'], () => undefined, async (item) => {
      calls++;
      return item === 'b' ? { answer: asAnswer(errors.paymentRequired('Render credits are exhausted.')) } : ok(item as string);
    });
    expect(calls).toBe(2);
    expect(a.status).toBe(402);
    const e = (a.body as { errors: { message: string; extensions: Record<string, unknown> }[] }).errors[0]!;
    expect(e.extensions).toEqual({ code: 'PAYMENT_REQUIRED', created: ['a'], failed_item: 1 });
    expect(e.message).toMatch(/Item 2 of 3 failed; the 1 before it were made/);
  });

  it('an empty array makes nothing and answers an empty list', async () => {
    expect(await runBatch([], () => undefined, async () => ok('x'))).toEqual({ status: 200, body: { data: [] } });
  });

  it('keys each item of an array body apart', () => {
    expect(itemKey('k', 0)).toBe('k#0');
    expect(itemKey('k', 1)).not.toBe(itemKey('k', 0));
    // a key of the longest length still fits with its suffix; a key too long stays too long (refused as for one item)
    const long = 'x'.repeat(255);
    expect(itemKey(long, 12).length).toBeLessThanOrEqual(255);
    expect(itemKey(long, 12)).not.toBe(itemKey(`${'x'.repeat(254)}y`, 12));
    expect(itemKey('x'.repeat(256), 0).length).toBeGreaterThan(255);
  });
});
