import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { errors } from '../../src/errors/catalog.js';
import type { Claim, EarlierAttempt, IdemRow, IdempotencyStore } from '../../src/store/idempotency.js';
import { asAnswer, bodyHash, IdempotentCreation, type Answer, type KeyedAttempt } from '../../src/write/idempotency.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('bodyHash', () => {
  it('is the SHA-256 of the canonical JSON: keys sorted at every depth, arrays in order', () => {
    expect(bodyHash({ c: 'x', a: [1, { z: true, b: null }] })).toBe(sha('{"a":[1,{"b":null,"z":true}],"c":"x"}'));
    expect(bodyHash({ b: 2, a: 1 })).toBe(bodyHash({ a: 1, b: 2 }));
    expect(bodyHash([2, 1])).not.toBe(bodyHash([1, 2]));
    expect(bodyHash({ a: 1, b: 2 })).not.toBe(bodyHash({ a: 1, b: 3 }));
    expect(bodyHash([])).toBe(sha('[]'));
    expect(bodyHash({})).toBe(sha('{}'));
  });
  it('hashes scalars as JSON, and no body as null', () => {
    expect(bodyHash('ab')).toBe(sha('"ab"'));
    expect(bodyHash(0)).toBe(sha('0'));
    expect(bodyHash(null)).toBe(sha('null'));
    expect(bodyHash(undefined)).toBe(sha('null'));
    expect(bodyHash({ k: 'v' })).not.toBe(bodyHash({ k: ['v'] }));
  });
});

describe('asAnswer', () => {
  it('is the error envelope with the status and a copy of the headers', () => {
    const ge = errors.serviceUnavailable('down');
    const a = asAnswer(ge);
    expect(a.status).toBe(503);
    expect(a.body).toEqual({ errors: [{ message: 'Service "v1" is unavailable. down', extensions: { code: 'SERVICE_UNAVAILABLE', service: 'v1', reason: 'down' } }] });
    expect(a.headers).toEqual({ ...ge.headers });
    expect(a.headers).not.toBe(ge.headers);
  });
  it("keeps the error's headers (retry-after of a 429)", () => {
    const a = asAnswer(errors.requestsExceeded(7, 0));
    expect(a.status).toBe(429);
    expect(a.headers).toEqual({ 'retry-after': '7' });
  });
});

const row = (over: Partial<IdemRow> = {}): IdemRow => ({
  state: 'pending',
  request_hash: bodyHash({ a: 1 }),
  status: null,
  response: null,
  created_at: 0,
  lease_until: 1,
  started_at: null,
  project_v1: null,
  render_name: null,
  render_v1_id: null,
  ...over,
});

/** An IdempotencyStore whose claims are scripted; every call is recorded. */
class FakeStore {
  calls: unknown[][] = [];
  constructor(private readonly claims: Claim[]) {}
  async claim(...args: unknown[]): Promise<Claim> {
    this.calls.push(['claim', ...args]);
    return this.claims.shift() ?? { kind: 'claimed' };
  }
  async attempt(...args: unknown[]) { this.calls.push(['attempt', ...args]); }
  async created(...args: unknown[]) { this.calls.push(['created', ...args]); }
  async finish(...args: unknown[]) { this.calls.push(['finish', ...args]); }
  async release(...args: unknown[]) { this.calls.push(['release', ...args]); }
  names() { return this.calls.map((c) => c[0]); }
}

function setup(claims: Claim[] = [], waitMs = 300) {
  const store = new FakeStore(claims);
  const slept: number[] = [];
  const idem = new IdempotentCreation(store as unknown as IdempotencyStore, {
    windowMs: 86_400_000,
    leaseMs: 60_000,
    waitMs,
    sleep: async (ms) => void slept.push(ms),
  });
  return { store, slept, idem };
}
const ok: Answer = { status: 200, body: { data: { id: 'x' } } };

describe('IdempotentCreation.run', () => {
  it('accepts a key of 255 characters, refuses 256 with 400 before touching the store', async () => {
    const { store, idem } = setup();
    await expect(idem.run('u1', 'k'.repeat(255), { a: 1 }, async () => ok)).resolves.toEqual(ok);
    const err = await idem.run('u1', 'k'.repeat(256), { a: 1 }, async () => ok).catch((e) => e);
    expect(err).toMatchObject({ status: 400, code: 'INVALID_PAYLOAD', message: 'Invalid payload. Idempotency-Key must be at most 255 characters.' });
    expect(store.calls.filter((c) => c[0] === 'claim')).toHaveLength(1);
  });

  it('claims with the principal, key, body hash, window and lease; records the answer as done', async () => {
    const { store, idem } = setup();
    const seen: KeyedAttempt[] = [];
    const a = await idem.run('u1', 'key', { a: 1 }, async (attempt) => { seen.push(attempt); return ok; });
    expect(a).toEqual(ok);
    expect(store.calls[0]).toEqual(['claim', 'u1', 'key', bodyHash({ a: 1 }), 86_400_000, 60_000]);
    expect(seen[0]!.earlier).toBeUndefined();
    expect('earlier' in seen[0]!).toBe(false);
    expect(store.calls.at(-1)).toEqual(['finish', 'u1', 'key', 'done', 200, ok.body]);
  });

  it("gives the creation hooks that record the attempt and the created render under the caller's key", async () => {
    const earlier: EarlierAttempt = { startedAt: 5, projectV1: 'proj_1', name: 'n', renderV1Id: null };
    const { store, idem } = setup([{ kind: 'claimed', earlier }]);
    await idem.run('u1', 'key', { a: 1 }, async (attempt) => {
      expect(attempt.earlier).toEqual(earlier);
      await attempt.onAttempt({ startedAt: 7, projectV1: 'proj_1', name: 'n' });
      await attempt.onCreated('rend_1');
      return ok;
    });
    expect(store.names()).toEqual(['claim', 'attempt', 'created', 'finish']);
    expect(store.calls[1]).toEqual(['attempt', 'u1', 'key', { startedAt: 7, projectV1: 'proj_1', name: 'n' }]);
    expect(store.calls[2]).toEqual(['created', 'u1', 'key', 'rend_1']);
  });

  it('a 5xx after v1 made the render (storing its data failed, say) keeps the key as unknown: a retry adopts it, never makes a second', async () => {
    const plain500: Answer = { status: 500, body: {} };
    const { store, idem } = setup();
    await idem.run('u', 'k', {}, async (attempt) => {
      await attempt.onAttempt({ startedAt: 1, projectV1: 'proj_1', name: 'n' });
      await attempt.onCreated('rend_1');
      return plain500;
    });
    expect(store.names()).toEqual(['claim', 'attempt', 'created', 'finish']);
    expect(store.calls.at(-1)).toEqual(['finish', 'u', 'k', 'unknown', 500, {}]);
    // the recorded render reaches the retry (the store answers a claim of an unknown key with its earlier attempt)
    const earlier: EarlierAttempt = { startedAt: 1, projectV1: 'proj_1', name: 'n', renderV1Id: 'rend_1' };
    const retry = setup([{ kind: 'claimed', earlier }]);
    const seen: KeyedAttempt[] = [];
    await retry.idem.run('u', 'k', {}, async (attempt) => { seen.push(attempt); return ok; });
    expect(seen[0]!.earlier?.renderV1Id).toBe('rend_1');
  });

  it('a 4xx answer after v1 was asked is kept (done); one refused before v1 was asked releases the key for a corrected retry', async () => {
    const refused: Answer = { status: 400, body: { errors: [{ message: 'bad', extensions: { code: 'INVALID_PAYLOAD' } }] } };
    const asked = setup();
    const answer = await asked.idem.run('u', 'k', {}, async (attempt) => {
      await attempt.onAttempt({ startedAt: 1, projectV1: 'proj_1', name: 'n' });
      return refused;
    });
    expect(answer).toBe(refused);
    expect(asked.store.calls.at(-1)).toEqual(['finish', 'u', 'k', 'done', 400, refused.body]);
    const early = setup();
    expect(await early.idem.run('u', 'k', {}, async () => refused)).toBe(refused);
    expect(early.store.names()).toEqual(['claim', 'release']);
    // a retry that takes over an earlier attempt keeps its answer even when refused before asking v1 again
    const earlier: EarlierAttempt = { startedAt: 1, projectV1: 'proj_1', name: 'n', renderV1Id: null };
    const takeover = setup([{ kind: 'claimed', earlier }]);
    await takeover.idem.run('u', 'k', {}, async () => refused);
    expect(takeover.store.calls.at(-1)).toEqual(['finish', 'u', 'k', 'done', 400, refused.body]);
  });

  it('a 2xx or 4xx answer is kept (done); a 503 "outcome unknown" is kept as unknown; any other 5xx releases the claim', async () => {
    const bad: Answer = { status: 499, body: { errors: [] } };
    const fine: Answer = { status: 200, body: { data: {} } };
    const unknown = asAnswer(errors.outcomeUnknown('?', { outcome: 'unknown' }));
    const notCreated = asAnswer(errors.outcomeUnknown('no', { outcome: 'not_created' }));
    const plain500: Answer = { status: 500, body: {} };
    const unknownAt500: Answer = { status: 500, body: { errors: [{ extensions: { outcome: 'unknown' } }] } };
    const noExtensions: Answer = { status: 502, body: { errors: [{ message: 'bare' }] } };
    for (const [answer, last] of [
      [fine, ['finish', 'u', 'k', 'done', 200, fine.body]],
      [unknown, ['finish', 'u', 'k', 'unknown', 503, unknown.body]],
      [unknownAt500, ['finish', 'u', 'k', 'unknown', 500, unknownAt500.body]],
      [notCreated, ['release', 'u', 'k']],
      [plain500, ['release', 'u', 'k']],
      [noExtensions, ['release', 'u', 'k']],
    ] as const) {
      const { store, idem } = setup();
      expect(await idem.run('u', 'k', {}, async (attempt) => {
        await attempt.onAttempt({ startedAt: 1, projectV1: 'proj_1', name: 'n' });
        return answer;
      })).toBe(answer);
      expect(store.calls.at(-1)).toEqual(last);
      expect(store.calls).toHaveLength(3);
    }
    const kept = setup();
    await kept.idem.run('u', 'k', {}, async (attempt) => { await attempt.onAttempt({ startedAt: 1, projectV1: 'p', name: 'n' }); return bad; });
    expect(kept.store.calls.at(-1)).toEqual(['finish', 'u', 'k', 'done', 499, bad.body]);
  });

  it('replays a finished answer with its status and body, marked as replayed, without creating', async () => {
    const hash = bodyHash({ a: 1 });
    const { store, idem } = setup([{ kind: 'held', row: row({ state: 'done', status: 201, response: '{"data":{"id":"r"}}', request_hash: hash }) }]);
    let created = 0;
    const a = await idem.run('u', 'k', { a: 1 }, async () => { created++; return ok; });
    expect(a).toEqual({ status: 201, body: { data: { id: 'r' } }, headers: { 'idempotent-replayed': 'true' } });
    expect(created).toBe(0);
    expect(store.names()).toEqual(['claim']);
  });

  it('a finished row without status or response replays 200 null', async () => {
    const { idem } = setup([{ kind: 'held', row: row({ state: 'done', status: null, response: null }) }]);
    expect(await idem.run('u', 'k', { a: 1 }, async () => ok)).toEqual({ status: 200, body: null, headers: { 'idempotent-replayed': 'true' } });
  });

  it('a held key with another body answers 400, whatever its state', async () => {
    for (const state of ['done', 'pending'] as const) {
      const { store, idem } = setup([{ kind: 'held', row: row({ state, request_hash: bodyHash({ a: 2 }), status: 200, response: '{}' }) }]);
      const a = await idem.run('u', 'k', { a: 1 }, async () => ok);
      expect(a.status).toBe(400);
      expect((a.body as { errors: { message: string }[] }).errors[0]!.message).toBe('Invalid payload. This Idempotency-Key was already used with a different request body.');
      expect(store.names()).toEqual(['claim']);
    }
  });

  it('waits 100 ms at a time for a pending holder, then creates once the claim is free', async () => {
    const pending = { kind: 'held', row: row() } as const;
    const { store, slept, idem } = setup([pending, pending]);
    expect(await idem.run('u', 'k', { a: 1 }, async () => ok)).toEqual(ok);
    expect(slept).toEqual([100, 100]);
    expect(store.names()).toEqual(['claim', 'claim', 'claim', 'finish']);
  });

  it('answers 503 once it has waited waitMs for a holder that does not finish', async () => {
    const pending = { kind: 'held', row: row() } as const;
    const { store, slept, idem } = setup(Array.from({ length: 10 }, () => pending), 300);
    let created = 0;
    const a = await idem.run('u', 'k', { a: 1 }, async () => { created++; return ok; });
    expect(a.status).toBe(503);
    expect((a.body as { errors: { message: string; extensions: { service: string } }[] }).errors[0]).toMatchObject({
      message: 'Service "gateway" is unavailable. An earlier request with this Idempotency-Key is still being processed.',
      extensions: { service: 'gateway' },
    });
    // asked at 0, 100, 200 and 300 ms: 4 claims, 3 sleeps
    expect(slept).toEqual([100, 100, 100]);
    expect(store.names()).toEqual(['claim', 'claim', 'claim', 'claim']);
    expect(created).toBe(0);
  });

  it('with waitMs 0 answers 503 at once', async () => {
    const { slept, idem } = setup([{ kind: 'held', row: row() }], 0);
    expect((await idem.run('u', 'k', { a: 1 }, async () => ok)).status).toBe(503);
    expect(slept).toEqual([]);
  });

  it('a concurrent duplicate in this process shares the first one\'s answer; another body is refused', async () => {
    const { store, idem } = setup();
    let release!: (a: Answer) => void;
    let created = 0;
    const create = () => { created++; return new Promise<Answer>((r) => { release = r; }); };
    const first = idem.run('u', 'k', { a: 1 }, create);
    const second = idem.run('u', 'k', { a: 1 }, create);
    await expect(idem.run('u', 'k', { a: 2 }, create)).rejects.toMatchObject({ status: 400, message: 'Invalid payload. This Idempotency-Key was already used with a different request body.' });
    // another principal with the same key is not a duplicate
    const other = idem.run('v', 'k', { a: 1 }, async () => ok);
    await other;
    await new Promise((r) => setImmediate(r));
    release(ok);
    expect(await first).toBe(ok);
    expect(await second).toBe(ok);
    expect(created).toBe(1);
    expect(store.calls.filter((c) => c[0] === 'claim').map((c) => c[1])).toEqual(['u', 'v']);
    // once answered, the slot is free: the next request asks the store again
    await idem.run('u', 'k', { a: 1 }, async () => ok);
    expect(store.calls.filter((c) => c[0] === 'claim').map((c) => c[1])).toEqual(['u', 'v', 'u']);
  });

  it('frees the slot also when the creation throws', async () => {
    const { store, idem } = setup();
    await expect(idem.run('u', 'k', {}, async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    await idem.run('u', 'k', {}, async () => ok);
    expect(store.calls.filter((c) => c[0] === 'claim')).toHaveLength(2);
  });
});
