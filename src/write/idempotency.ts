import { createHash } from 'node:crypto';
import { errorEnvelope, errors, type GatewayError } from '../errors/catalog.js';
import type { EarlierAttempt, IdempotencyStore } from '../store/idempotency.js';

/** An answer as it is sent and, for a key, kept and replayed. */
export interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The hooks a keyed attempt gives the creation, so what it does is recorded as it happens. */
export interface KeyedAttempt {
  readonly earlier?: EarlierAttempt;
  onAttempt(a: { startedAt: number; projectV1: string; name: string }): Promise<void>;
  onCreated(renderV1Id: string): Promise<void>;
}

export interface IdempotencyOptions {
  readonly windowMs: number;
  readonly leaseMs: number;
  /** How long a request waits for another one holding the same key before answering 503. */
  readonly waitMs: number;
  readonly sleep: (ms: number) => Promise<void>;
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** The request body's fingerprint: the same JSON in any key order is the same request. */
export const bodyHash = (body: unknown): string =>
  createHash('sha256')
    .update(canonical(body ?? null))
    .digest('hex');

export const asAnswer = (ge: GatewayError): Answer => ({ status: ge.status, body: errorEnvelope(ge), headers: { ...ge.headers } });

/**
 * The Idempotency-Key protocol of POST /renders, per principal (one user's key never answers another's request):
 * the first answer is kept for the window and replayed; a different body under the same key is a 400; concurrent
 * duplicates wait for the first; a claim whose holder crashed (lease ran out) or whose outcome was unknown is taken over,
 * and the creation looks for the earlier attempt's render first. Nothing was created → the claim is released; so is a
 * claim whose request was refused before v1 was asked (a corrected retry may use the key).
 */
export class IdempotentCreation {
  private readonly inflight = new Map<string, { hash: string; promise: Promise<Answer> }>();
  constructor(
    private readonly store: IdempotencyStore,
    private readonly o: IdempotencyOptions,
  ) {}

  async run(principalId: string, key: string, body: unknown, create: (attempt: KeyedAttempt) => Promise<Answer>): Promise<Answer> {
    if (key.length > 255) throw errors.invalidPayload('Idempotency-Key must be at most 255 characters.');
    const hash = bodyHash(body);
    const slot = `${principalId}\u0000${key}`;
    const mismatch = () => errors.invalidPayload('This Idempotency-Key was already used with a different request body.');
    const local = this.inflight.get(slot);
    if (local) {
      if (local.hash !== hash) throw mismatch();
      return local.promise;
    }
    const promise = this.claimAndCreate(principalId, key, hash, create, mismatch);
    this.inflight.set(slot, { hash, promise });
    try {
      return await promise;
    } finally {
      this.inflight.delete(slot);
    }
  }

  private async claimAndCreate(
    principalId: string,
    key: string,
    hash: string,
    create: (a: KeyedAttempt) => Promise<Answer>,
    mismatch: () => GatewayError,
  ): Promise<Answer> {
    let earlier: EarlierAttempt | undefined;
    for (let waited = 0; ; waited += 100) {
      const c = await this.store.claim(principalId, key, hash, this.o.windowMs, this.o.leaseMs);
      if (c.kind === 'claimed') {
        earlier = c.earlier;
        break;
      }
      if (c.row.request_hash !== hash) return asAnswer(mismatch());
      if (c.row.state === 'done')
        return { status: c.row.status ?? 200, body: JSON.parse(c.row.response ?? 'null'), headers: { 'idempotent-replayed': 'true' } };
      if (waited >= this.o.waitMs)
        return asAnswer(errors.serviceUnavailable('An earlier request with this Idempotency-Key is still being processed.', 'gateway'));
      await this.o.sleep(100);
    }
    let created = false;
    let attempted = false;
    const a = await create({
      ...(earlier ? { earlier } : {}),
      onAttempt: (x) => {
        attempted = true;
        return this.store.attempt(principalId, key, x);
      },
      onCreated: async (id) => {
        await this.store.created(principalId, key, id);
        created = true;
      },
    });
    const outcome = (a.body as { errors?: { extensions?: { outcome?: string } }[] }).errors?.[0]?.extensions?.outcome;
    // a request refused before v1 was asked (validation, permissions) is not kept: the corrected retry under the same key
    // is a new request (as Stripe does: only an answer of an endpoint that started executing is saved)
    if (a.status < 500 && a.status >= 400 && !attempted && !created && !earlier) await this.store.release(principalId, key);
    else if (a.status < 500) await this.store.finish(principalId, key, 'done', a.status, a.body);
    // a failure after v1 made the render (storing its data, building the answer) is not "nothing created": a retry
    // adopts the recorded render instead of making a second one
    else if (outcome === 'unknown' || created) await this.store.finish(principalId, key, 'unknown', a.status, a.body);
    else await this.store.release(principalId, key); // nothing was created: a retry may create
    return a;
  }
}
