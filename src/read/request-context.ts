import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/authenticate.js';
import { requirePrincipal } from '../auth/guards.js';
import type { Clock } from '../lib/clock.js';
import { CallMeter } from '../live/meter.js';
import type { V1Meter, V1Session } from '../v1/client.js';
import { SpareRetries } from '../v1/spare-retries.js';

/** What a request context is built from (the composition root's services). */
export interface RequestContextDeps {
  readonly clock: Clock;
  readonly config: { readonly UPSTREAM_CALL_BUDGET: number; readonly V1_RETRY_BUDGET_PER_READ: number };
  readonly metrics: { budgetRefused(): void };
  v1For(userId: string, meter?: V1Meter, requestId?: string): Promise<V1Session>;
  partitionHeld(userId: string): string | undefined;
}

/**
 * One per request, built on first use and every part of it lazily, so the kept-answer path pays only for what it
 * reads: the principal, the cache partition of its key, the request id and logger, the v1 call meter and session, and
 * `now` — taken once from the injected clock and used by everything that judges time in this request (`$NOW` in the
 * query, the replica's freshness, the answer cache's validity).
 */
export class RequestContext {
  private at: number | undefined;
  private callMeter: CallMeter | undefined;
  private v1: Promise<V1Session> | undefined;

  constructor(private readonly deps: RequestContextDeps, readonly request: FastifyRequest) {}

  get id(): string { return this.request.id; }
  get log(): FastifyBaseLogger { return this.request.log; }
  /** The authenticated caller (403 when there is none). */
  get principal(): Principal { return requirePrincipal(this.request); }
  /** This request's moment, read from the clock once. */
  get now(): number { return (this.at ??= this.deps.clock.now()); }
  /** The cache partition of the caller's key when the key is held in memory (no store read); undefined otherwise. */
  get partitionHeld(): string | undefined { return this.deps.partitionHeld(this.principal.user.id); }
  /** The v1 calls this request makes, against UPSTREAM_CALL_BUDGET. */
  get meter(): CallMeter {
    return (this.callMeter ??= new CallMeter(
      this.deps.config.UPSTREAM_CALL_BUDGET, () => this.deps.metrics.budgetRefused(), new SpareRetries(this.deps.config.V1_RETRY_BUDGET_PER_READ),
    ));
  }
  /** The v1 API as the caller's bound key sees it (calls counted by `meter`). */
  session(): Promise<V1Session> {
    return (this.v1 ??= this.deps.v1For(this.principal.user.id, this.meter, this.request.id));
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Its read context, made by `requestContext` on first use (a property, not a WeakMap: one a request made GC work). */
    readContext: RequestContext | null;
  }
}

/** The request's context (the same object for the whole request). */
export function requestContext(deps: RequestContextDeps, request: FastifyRequest): RequestContext {
  return (request.readContext ??= new RequestContext(deps, request));
}
