import { LRUCache } from 'lru-cache';
import { createHash } from 'node:crypto';
import { Agent, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  V1MemberListSchema,
  V1ProjectPageSchema,
  V1ProjectSchema,
  V1RenderPageSchema,
  V1RenderSchema,
  V1TeamListSchema,
  V1TemplateListSchema,
  V1TemplateSchema,
  V1UserSchema,
  type CreateRenderBody,
  type Page,
  type RenderStatus,
  type V1Project,
  type V1Render,
  type V1Team,
  type V1TeamMember,
  type V1Template,
  type V1TemplateSummary,
  type V1User,
} from './schemas.js';
import { V1ContractError, V1Error, V1NetworkError, V1RateLimitedError, V1ServerError, errorForStatus } from './errors.js';

export interface V1ClientOptions {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  /** Extra attempts for GETs after a 5xx, a network failure or a 429. POSTs are never retried. */
  readonly retries: number;
  readonly retryBaseMs: number;
  readonly maxRetryAfterMs?: number;
  readonly dispatcher?: Dispatcher;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
  /** Sees every HTTP exchange of every key (metrics, v1 reachability for health). */
  readonly observer?: V1Meter;
}

/** Who a call is made for: the request's meter and its request id (sent as X-Request-Id). */
export interface CallContext {
  readonly meter?: V1Meter | undefined;
  readonly requestId?: string | undefined;
}

/** One HTTP exchange with v1, reported to a meter (explain output, call budgets, benchmarks). */
export interface V1CallInfo {
  readonly method: string;
  readonly path: string;
  readonly status: number | null;
  readonly attempt: number;
  readonly ms: number;
}
export interface V1Meter {
  onCall(info: V1CallInfo): void;
  onCoalesced?(path: string): void;
  /**
   * A GET has used its own retries and failed again (5xx, network, 429): true grants one more attempt from the
   * request's spare retries (`spare-retries.ts`). At most V1_RETRIES of them per call.
   */
  spareRetry?(): boolean;
}

export interface ListQuery {
  limit?: number;
  cursor?: string;
  search?: string;
  order?: 'asc' | 'desc';
  status?: RenderStatus;
}

/** A key and its non-secret identifier (hashed once: cache partitions and coalescing use it on every call). */
interface V1Credential {
  readonly apiKey: string;
  readonly partition: string;
}
/** Cache partitions by key, hashed once per key (not per request); bounded, the key itself is not logged or returned. */
const partitions = new LRUCache<string, string>({ max: 10_000 });
/** The cache partition of a v1 key: a short digest, never the key. */
export function partitionOf(apiKey: string): string {
  let partition = partitions.get(apiKey);
  if (partition === undefined) {
    partition = createHash('sha256').update(apiKey).digest('hex').slice(0, 16);
    partitions.set(apiKey, partition);
  }
  return partition;
}
const credential = (apiKey: string): V1Credential => ({ apiKey, partition: partitionOf(apiKey) });

/**
 * The only module that talks to v1: undici with keep-alive, a per-request timeout, typed errors,
 * retries with backoff and jitter for GETs only, coalescing of identical in-flight GETs per key, and
 * zod validation of every answer.
 */
export class V1Client {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly inflight = new Map<string, Promise<unknown>>();
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  constructor(readonly options: V1ClientOptions) {
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher ?? new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: 64 });
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.random = options.random ?? Math.random;
  }

  /** The API of one person's key. `meter` receives every HTTP exchange made through it. */
  as(apiKey: string, meter?: V1Meter, requestId?: string): V1Session {
    return new V1Session(this, credential(apiKey), { meter, requestId });
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /** @internal */
  async get<S extends z.ZodType>(cred: V1Credential, path: string, schema: S, ctx: CallContext = {}): Promise<z.infer<S>> {
    const k = `${cred.partition} ${path}`;
    const existing = this.inflight.get(k);
    if (existing) {
      ctx.meter?.onCoalesced?.(path);
      return existing as Promise<z.infer<S>>;
    }
    const p = this.withRetries((attempt) => this.send('GET', path, cred.apiKey, undefined, ctx, attempt), 'GET', ctx).then((body) =>
      validate(schema, body, 'GET', path),
    );
    this.inflight.set(k, p);
    try {
      return await p;
    } finally {
      this.inflight.delete(k);
    }
  }

  /** @internal Never retried: v1 has no idempotency key, a blind retry could bill twice. */
  async post<S extends z.ZodType>(cred: V1Credential, path: string, body: unknown, schema: S, ctx: CallContext = {}): Promise<z.infer<S>> {
    const res = await this.send('POST', path, cred.apiKey, body, ctx);
    return validate(schema, res, 'POST', path);
  }

  /**
   * GETs are tried again after a 5xx, a network failure or a 429: V1_RETRIES times with exponential backoff and jitter,
   * then up to as many more from the request's spare retries (`V1Meter.spareRetry`), each waiting as long as the last
   * of its own retries did — not after a timeout (a call that timed out already held the request its own retries' time).
   */
  private async withRetries(fn: (attempt: number) => Promise<unknown>, method: string, ctx: CallContext = {}): Promise<unknown> {
    const { retries } = this.options;
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn(attempt);
      } catch (e) {
        const retryable = e instanceof V1ServerError || e instanceof V1NetworkError || e instanceof V1RateLimitedError;
        if (!retryable || method !== 'GET') throw e;
        // no spare after a timed-out attempt: each one held the request V1_TIMEOUT_MS (v1 overloaded, or hanging)
        const slow = e instanceof V1NetworkError && e.timedOut;
        if (attempt >= retries && (attempt >= 2 * retries || slow || !ctx.meter?.spareRetry?.())) throw e;
        let wait = this.options.retryBaseMs * 2 ** Math.min(attempt, Math.max(0, retries - 1));
        wait = wait / 2 + this.random() * (wait / 2); // jitter
        if (e instanceof V1RateLimitedError && e.retryAfterMs !== undefined) {
          if (e.retryAfterMs > (this.options.maxRetryAfterMs ?? 30_000)) throw e;
          wait = Math.max(wait, e.retryAfterMs);
        }
        await this.sleep(wait);
      }
    }
  }

  private async send(method: 'GET' | 'POST', path: string, apiKey: string, body: unknown, ctx: CallContext, attempt = 0): Promise<unknown> {
    const started = performance.now();
    let status: number | null = null;
    try {
      const res = await request(new URL(path, this.options.baseUrl), {
        method,
        dispatcher: this.dispatcher,
        headers: {
          authorization: `Bearer ${apiKey}`,
          accept: 'application/json',
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(ctx.requestId ? { 'x-request-id': ctx.requestId } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      status = res.statusCode;
      const text = await res.body.text();
      let parsed: unknown = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      if (status >= 200 && status < 300) {
        if (parsed === undefined)
          throw new V1ContractError(`v1 ${method} ${path} answered ${status} with a body that is not JSON`, status, method, path);
        return parsed;
      }
      const ra = res.headers['retry-after'];
      throw errorForStatus(status, method, path, parsed, Array.isArray(ra) ? ra[0] : ra);
    } catch (e) {
      if (e instanceof V1Error) throw e;
      const err = e as Error & { code?: string };
      const timedOut = err.code === 'UND_ERR_HEADERS_TIMEOUT' || err.code === 'UND_ERR_BODY_TIMEOUT' || err.name === 'TimeoutError';
      throw new V1NetworkError(`v1 ${method} ${path} failed: ${timedOut ? 'timed out' : (err.code ?? err.message)}`, method, path, timedOut, e);
    } finally {
      const info = { method, path, status, attempt, ms: performance.now() - started };
      ctx.meter?.onCall(info);
      this.options.observer?.onCall(info);
    }
  }
}

function validate<S extends z.ZodType>(schema: S, body: unknown, method: string, path: string): z.infer<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
  throw new V1ContractError(`v1 ${method} ${path} answered outside its contract: ${problems}`, 200, method, path);
}

function qs(params: Record<string, string | number | undefined>): string {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) s.set(k, String(v));
  const out = s.toString();
  return out ? `?${out}` : '';
}

const enc = encodeURIComponent;

/** The v1 API as one person's key sees it. */
export class V1Session {
  constructor(
    private readonly client: V1Client,
    private readonly cred: V1Credential,
    private readonly ctx: CallContext = {},
  ) {}

  /** A stable, non-secret identifier of the key (cache partitions, coalescing). */
  get partition(): string {
    return this.cred.partition;
  }

  me(): Promise<V1User> {
    return this.client.get(this.cred, '/v1/me', V1UserSchema, this.ctx);
  }
  teams(): Promise<{ data: V1Team[] }> {
    return this.client.get(this.cred, '/v1/teams', V1TeamListSchema, this.ctx);
  }
  members(teamId: string): Promise<{ data: V1TeamMember[] }> {
    return this.client.get(this.cred, `/v1/users${qs({ team_id: teamId })}`, V1MemberListSchema, this.ctx);
  }
  projectsPage(teamId: string, q: ListQuery = {}): Promise<Page<V1Project>> {
    return this.client.get(this.cred, `/v1/projects${qs({ team_id: teamId, ...q })}`, V1ProjectPageSchema, this.ctx);
  }
  project(id: string): Promise<V1Project> {
    return this.client.get(this.cred, `/v1/projects/${enc(id)}`, V1ProjectSchema, this.ctx);
  }
  templates(projectId: string): Promise<{ data: V1TemplateSummary[] }> {
    return this.client.get(this.cred, `/v1/templates${qs({ project_id: projectId })}`, V1TemplateListSchema, this.ctx);
  }
  template(id: string, projectId: string): Promise<V1Template> {
    return this.client.get(this.cred, `/v1/templates/${enc(id)}${qs({ project_id: projectId })}`, V1TemplateSchema, this.ctx);
  }
  rendersPage(projectId: string, q: ListQuery = {}): Promise<Page<V1Render>> {
    return this.client.get(this.cred, `/v1/renders${qs({ project_id: projectId, ...q })}`, V1RenderPageSchema, this.ctx);
  }
  render(id: string): Promise<V1Render> {
    return this.client.get(this.cred, `/v1/renders/${enc(id)}`, V1RenderSchema, this.ctx);
  }
  createRender(body: CreateRenderBody): Promise<V1Render> {
    return this.client.post(this.cred, '/v1/renders', body, V1RenderSchema, this.ctx);
  }

  /** Every page of a cursor-paginated list: stops when next_cursor is null, never because a page is short. */
  async *pages<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<readonly T[]> {
    let cursor: string | undefined;
    do {
      const page = await fetchPage(cursor);
      yield page.data;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }
}

export { V1Error };
