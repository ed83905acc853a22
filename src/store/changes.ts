import type { Db } from './db.js';

/**
 * Change notifications between gateway instances (and the operator CLI) sharing one store, so that what each
 * instance keeps in memory (users, static tokens, overlays, id pairs, index state) follows the store.
 * - PostgreSQL: LISTEN/NOTIFY on one channel; a dropped LISTEN connection reconnects and signals a resync (at the drop,
 *   and once listening again).
 * - SQLite (one host): `PRAGMA data_version` changes whenever another connection (another process: the CLI)
 *   commits; polled every 250 ms, a change signals a resync.
 * On a resync each holder of memory reads again what it keeps, or only what changed: the replica's teams catch up from
 * their change marks (src/replica/holding/catch-up.ts).
 * A publisher's own instance hears its change at once (before the write's answer is sent).
 */
export interface ChangeBus {
  /** Tells every instance (this one synchronously) that `topic` changed; `key` narrows it (an id), `*` for all. */
  publish(topic: string, key?: string): Promise<void>;
  on(topic: string, fn: (key: string) => void): void;
  /** Anything may have changed (a lost connection, another process's write): what is kept in memory is read again. */
  onResync(fn: () => void): void;
  /** Looks for other processes' changes now (SQLite's poll, run at once; PostgreSQL hears them as they happen). */
  sync(): Promise<void>;
  close(): Promise<void>;
  /** PostgreSQL: the listening connection's application_name; undefined for SQLite. */
  readonly listenerName?: string;
}

const CHANNEL = 'gateway_changes';

abstract class BaseBus implements ChangeBus {
  private readonly listeners = new Map<string, ((key: string) => void)[]>();
  private readonly resyncs: (() => void)[] = [];
  on(topic: string, fn: (key: string) => void): void {
    this.listeners.set(topic, [...(this.listeners.get(topic) ?? []), fn]);
  }
  onResync(fn: () => void): void {
    this.resyncs.push(fn);
  }
  protected emit(topic: string, key: string): void {
    for (const fn of this.listeners.get(topic) ?? []) fn(key);
  }
  protected resync(): void {
    for (const fn of this.resyncs) fn();
  }
  abstract publish(topic: string, key?: string): Promise<void>;
  abstract close(): Promise<void>;
  async sync(): Promise<void> {}
}

/** SQLite: local delivery, plus a poll of `PRAGMA data_version` for other processes' commits. */
class SqliteBus extends BaseBus {
  private timer: NodeJS.Timeout | undefined;
  private version: number | undefined;
  constructor(
    private readonly readVersion: () => Promise<number>,
    pollMs: number,
  ) {
    super();
    if (pollMs > 0) this.timer = setInterval(() => void this.poll(), pollMs).unref();
  }
  override async sync(): Promise<void> {
    await this.poll();
  }
  async poll(): Promise<void> {
    let v: number;
    try {
      v = await this.readVersion();
    } catch {
      return;
    }
    if (this.version !== undefined && v !== this.version) this.resync();
    this.version = v;
  }
  async publish(topic: string, key = '*'): Promise<void> {
    this.emit(topic, key);
  }
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
  }
}

interface PgClient {
  connect(): Promise<void>;
  query(q: string, values?: unknown[]): Promise<unknown>;
  on(event: 'notification', fn: (m: { channel: string; payload?: string }) => void): void;
  on(event: 'error' | 'end', fn: (e?: Error) => void): void;
  end(): Promise<void>;
}

/** PostgreSQL: NOTIFY through the pool, LISTEN on a dedicated connection that comes back after a drop. */
class PgBus extends BaseBus {
  private listener: PgClient | undefined;
  private closed = false;
  private readonly origin = Math.random().toString(36).slice(2);
  constructor(
    private readonly newClient: (applicationName: string) => PgClient,
    private readonly notify: (payload: string) => Promise<void>,
    private readonly retryMs = 1000,
  ) {
    super();
  }

  async start(): Promise<void> {
    const c = this.newClient(this.listenerName);
    c.on('notification', (m) => {
      if (m.channel !== CHANNEL || !m.payload) return;
      const [origin, topic, ...rest] = m.payload.split('|');
      if (origin === this.origin || !topic) return; // heard locally already
      this.emit(topic, rest.join('|') || '*');
    });
    const lost = () => {
      if (this.closed || this.listener !== c) return;
      this.listener = undefined;
      this.resync(); // announcements may have been lost with the connection
      this.reconnect(0);
    };
    c.on('error', lost);
    c.on('end', lost);
    this.listener = c;
    await c.connect();
    await c.query(`LISTEN ${CHANNEL}`);
  }

  /** Listens again: at once after a drop, then every `retryMs` while the server is away. */
  private reconnect(attempt: number): void {
    const again = () => {
      if (this.closed) return;
      // listening again: whatever changed while nobody listened is read again
      this.start().then(
        () => this.resync(),
        () => this.reconnect(attempt + 1),
      );
    };
    if (attempt === 0) setImmediate(again);
    else setTimeout(again, this.retryMs).unref();
  }

  /** The listening connection's name in pg_stat_activity (operators; tests). */
  get listenerName(): string {
    return `gateway-listener-${this.origin}`;
  }

  async publish(topic: string, key = '*'): Promise<void> {
    this.emit(topic, key);
    await this.notify(`${this.origin}|${topic}|${key}`);
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.listener;
    this.listener = undefined;
    await c?.end().catch(() => {});
  }
}

/** The bus for a store: PostgreSQL LISTEN/NOTIFY, or SQLite's data_version poll (`pollMs`, 0 = off). */
export async function openChangeBus(db: Db, url: string, pollMs = 250): Promise<ChangeBus> {
  if (db.dialect === 'postgres') {
    const pg = (await import('pg')).default;
    const { sql } = await import('kysely');
    const bus = new PgBus(
      (name) => new pg.Client({ connectionString: url, application_name: name }) as unknown as PgClient,
      async (payload) => {
        await sql`select pg_notify(${CHANNEL}, ${payload})`.execute(db.kysely);
      },
    );
    await bus.start();
    return bus;
  }
  const { sql } = await import('kysely');
  const bus = new SqliteBus(async () => {
    const r = await sql<{ data_version: number }>`pragma data_version`.execute(db.kysely);
    return Number(r.rows[0]?.data_version ?? 0);
  }, pollMs);
  await bus.poll();
  return bus;
}
