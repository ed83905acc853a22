import { V1NotFoundError } from '../v1/errors.js';
import type { V1Session, ListQuery } from '../v1/client.js';
import {
  V1_PAGE_MAX,
  type Page,
  type RenderStatus,
  type V1Project,
  type V1Render,
  type V1Team,
  type V1TeamMember,
  type V1TemplateSummary,
} from '../v1/schemas.js';
import type { V1Cache } from './v1-cache.js';
import { mapLimit } from '../lib/limit.js';
import type { CallMeter } from './meter.js';

/**
 * One legacy request's view of v1: every read goes through the per-key cache, counts against the
 * request's call budget, and fans out with bounded concurrency.
 */
export class Catalog {
  /** Shared by every page fetch of the request's streams and scans. */
  private readonly gate: Gate;

  constructor(
    private readonly s: V1Session,
    private readonly cache: V1Cache,
    readonly meter: CallMeter,
    readonly concurrency: number,
  ) {
    this.gate = new Gate(concurrency);
  }

  private get p(): string {
    return this.s.partition;
  }

  /** One v1 call behind the per-key cache; `ttl` may depend on the value (renders by status). */
  private async cached<T>(key: string, ttl: number | ((v: T) => number), load: () => Promise<T>): Promise<T> {
    const hit = this.cache.get<T>(this.p, key);
    if (hit !== undefined) {
      this.meter.cacheHits++;
      return hit;
    }
    this.meter.reserve();
    const v = await load();
    this.cache.set(this.p, key, v, typeof ttl === 'number' ? ttl : ttl(v));
    return v;
  }

  /** One v1 page, counted against the call budget, then as a page and its records. */
  private async page<T>(fetch: () => Promise<Page<T>>): Promise<Page<T>> {
    this.meter.reserve();
    const page = await fetch();
    this.meter.pages++;
    this.meter.records += page.data.length;
    return page;
  }

  /** Every page of a cursor-paginated list, each one metered. */
  private walk<T>(fetch: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<readonly T[]> {
    return this.s.pages((cursor) => this.page(() => fetch(cursor)));
  }

  map<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
    return mapLimit(items, this.concurrency, fn);
  }

  teams(): Promise<V1Team[]> {
    return this.cached('teams', this.cache.ttl.metadataMs, async () => (await this.s.teams()).data);
  }

  async projectsOfTeam(teamId: string): Promise<V1Project[]> {
    const hit = this.cache.get<V1Project[]>(this.p, `projects:${teamId}`);
    if (hit) {
      this.meter.cacheHits++;
      return hit;
    }
    const all: V1Project[] = [];
    for await (const page of this.walk((cursor) => this.s.projectsPage(teamId, { limit: V1_PAGE_MAX, ...(cursor ? { cursor } : {}) })))
      all.push(...page);
    this.cache.set(this.p, `projects:${teamId}`, all, this.cache.ttl.metadataMs);
    for (const p of all) this.cache.set(this.p, `project:${p.id}`, p, this.cache.ttl.metadataMs);
    return all;
  }

  async project(id: string): Promise<V1Project | undefined> {
    try {
      return await this.cached(`project:${id}`, this.cache.ttl.metadataMs, () => this.s.project(id));
    } catch (e) {
      if (e instanceof V1NotFoundError) return undefined;
      throw e;
    }
  }

  templatesOf(projectId: string): Promise<V1TemplateSummary[]> {
    return this.cached(`templates:${projectId}`, this.cache.ttl.metadataMs, async () => (await this.s.templates(projectId)).data);
  }

  async template(id: string, projectId: string) {
    return this.cached(`template:${id}`, this.cache.ttl.metadataMs, () => this.s.template(id, projectId));
  }

  membersOf(teamId: string): Promise<V1TeamMember[]> {
    return this.cached(`members:${teamId}`, this.cache.ttl.metadataMs, async () => (await this.s.members(teamId)).data);
  }

  async render(id: string): Promise<V1Render | undefined> {
    try {
      return await this.cached(
        `render:${id}`,
        (r: V1Render) => this.cache.renderTtl(r),
        () => this.s.render(id),
      );
    } catch (e) {
      if (e instanceof V1NotFoundError) return undefined;
      throw e;
    }
  }

  /** A render v1 just answered another way (a create): later reads by id are warm. */
  rememberRender(r: V1Render): void {
    this.cache.set(this.p, `render:${r.id}`, r, this.cache.renderTtl(r));
  }

  /**
   * One project's renders page by page, not cached (for folds over everything, which keep only what
   * they need of each page).
   */
  renderPages(projectId: string, status?: RenderStatus): AsyncGenerator<readonly V1Render[]> {
    return this.walk((cursor) =>
      this.gate.run(() => this.s.rendersPage(projectId, { limit: V1_PAGE_MAX, ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) })),
    );
  }

  /** A lazy stream of one project's renders in v1 order (for early termination), pages fetched under the gate. */
  stream<T = V1Render>(
    projectId: string,
    q: ListQuery,
    firstPageLimit = V1_PAGE_MAX,
    prefetch = false,
    transform?: (items: readonly V1Render[]) => Promise<T[]>,
  ): RenderStream<T> {
    // a cursor stays valid across limits (v1 binds it to endpoint and filters only)
    return new RenderStream<T>(
      (cursor) =>
        this.page(() => this.s.rendersPage(projectId, { ...q, limit: cursor ? V1_PAGE_MAX : firstPageLimit, ...(cursor ? { cursor } : {}) })),
      this.gate,
      prefetch,
      transform,
    );
  }
}

/** A small semaphore: at most `n` page fetches at once across a request's streams. */
export class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly n: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.n) await new Promise<void>((r) => this.waiting.push(r));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/** Pages through one v1 list on demand, keeping one page fetched ahead. */
export class RenderStream<T = V1Render> {
  private buffer: T[] = [];
  private cursor: string | undefined;
  private done = false;
  private started = false;
  private next: Promise<void> | undefined;
  constructor(
    private readonly fetch: (cursor: string | undefined) => Promise<Page<V1Render>>,
    private readonly gate: Gate,
    private readonly prefetch = true,
    /** Turns each arriving page into what is buffered (e.g. filtered, serialised entries). */
    private readonly transform: (items: readonly V1Render[]) => Promise<T[]> = async (items) => items as unknown as T[],
  ) {}

  private load(): Promise<void> {
    this.next ??= this.gate
      .run(() => this.fetch(this.started ? this.cursor : undefined))
      .then(async (page) => {
        this.started = true;
        this.cursor = page.next_cursor ?? undefined;
        this.buffer.push(...(await this.transform(page.data)));
        if (this.cursor === undefined) this.done = true;
        this.next = undefined;
        // read ahead: while this page is consumed, the next one is on its way (bounded by the gate)
        if (this.prefetch && !this.done && this.buffer.length < 30) void this.load().catch(() => {});
      });
    return this.next;
  }

  /** The head without waiting (undefined when exhausted or not fetched yet: then `peek`). */
  head(): T | undefined {
    return this.buffer[0];
  }

  /** The next item without consuming it, fetching pages (even empty ones) as needed. */
  async peek(): Promise<T | undefined> {
    while (this.buffer.length === 0 && !this.done) await this.load();
    return this.buffer[0];
  }

  shift(): T | undefined {
    const r = this.buffer.shift();
    if (this.prefetch && this.started && !this.done && this.buffer.length < 30 && !this.next) void this.load().catch(() => {});
    return r;
  }
}
