import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { V1CallInfo } from '../v1/client.js';

/** v1 paths reduced to their endpoint template (`/v1/renders/rend_x?…` → `/v1/renders/{id}`): bounded label values. */
export function v1Endpoint(path: string): string {
  const parts = (path.split('?')[0] ?? '').split('/').filter(Boolean);
  if (parts[0] !== 'v1' || parts.length < 2) return 'other';
  return `/v1/${parts[1]}${parts.length > 2 ? '/{id}' : ''}`;
}

export type WebhookOutcome = 'accepted' | 'rejected' | 'duplicate';

/**
 * The gateway's Prometheus metrics, in a registry of its own (one per app: tests build many). Labels are bounded:
 * route templates (never raw paths), v1 endpoint templates, statuses — never a team, user or key.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new RequestSeries([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]);
  private readonly v1Calls: Counter<'endpoint' | 'status'>;
  private readonly v1Seconds: Histogram<'endpoint'>;
  private readonly v1Retries: Counter<'endpoint'>;
  private readonly budgetRefusals: Counter;
  private readonly webhooks: Counter<'outcome'>;
  private readonly webhookOwners: Counter;
  private readonly diffs: Counter<'route'>;

  constructor(sources: { cache?: { hits: number; misses: number } } = {}) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const requestsTotal = this.requests.counter('gateway_http_requests_total', 'Legacy requests by route template, method and status');
    this.registry.registerMetric(requestsTotal as unknown as Metric);
    this.registry.registerMetric(this.requests.histogram('gateway_http_request_duration_seconds', 'Legacy request latency') as unknown as Metric);
    this.v1Calls = new Counter({
      name: 'gateway_v1_calls_total',
      help: 'HTTP exchanges with v1 by endpoint and status (status 0: no answer)',
      labelNames: ['endpoint', 'status'],
      registers,
    });
    this.v1Seconds = new Histogram({
      name: 'gateway_v1_call_duration_seconds',
      help: 'v1 call latency',
      labelNames: ['endpoint'],
      registers,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    });
    this.v1Retries = new Counter({
      name: 'gateway_v1_retries_total',
      help: 'v1 GETs sent again after a 5xx, a network failure or a 429',
      labelNames: ['endpoint'],
      registers,
    });
    this.budgetRefusals = new Counter({
      name: 'gateway_v1_call_budget_refusals_total',
      help: 'Legacy requests refused for needing more than UPSTREAM_CALL_BUDGET v1 calls',
      registers,
    });
    this.webhooks = new Counter({
      name: 'gateway_webhook_deliveries_total',
      help: 'v1 webhook deliveries by outcome',
      labelNames: ['outcome'],
      registers,
    });
    this.webhookOwners = new Counter({
      name: 'gateway_webhook_owner_refusals_total',
      help: 'v1 webhook deliveries refused for naming another team or project than the render\'s own',
      registers,
    });
    this.diffs = new Counter({
      name: 'gateway_comparison_diffs_total',
      help: 'Differences found by compare/shadow mode, by route template',
      labelNames: ['route'],
      registers,
    });
    const cache = sources.cache;
    let seen = { hits: 0, misses: 0 };
    const sync = () => {
      if (!cache) return;
      hits.inc(cache.hits - seen.hits);
      misses.inc(cache.misses - seen.misses);
      seen = { hits: cache.hits, misses: cache.misses };
    };
    const hits: Counter = new Counter({
      name: 'gateway_cache_hits_total',
      help: 'Per-key v1 cache look-ups that found an entry',
      registers,
      collect: sync,
    });
    const misses: Counter = new Counter({
      name: 'gateway_cache_misses_total',
      help: 'Per-key v1 cache look-ups that found none',
      registers,
      collect: sync,
    });
  }

  request(route: string, method: string, status: number, seconds: number): void {
    this.requests.observe(route, method, status, seconds);
  }

  v1Call(info: V1CallInfo): void {
    const endpoint = v1Endpoint(info.path);
    this.v1Calls.inc({ endpoint, status: String(info.status ?? 0) });
    this.v1Seconds.observe({ endpoint }, info.ms / 1000);
    if (info.attempt > 0) this.v1Retries.inc({ endpoint });
  }

  budgetRefused(): void {
    this.budgetRefusals.inc();
  }
  webhook(outcome: WebhookOutcome): void {
    this.webhooks.inc({ outcome });
  }
  webhookOwnerRefused(): void {
    this.webhookOwners.inc();
  }
  comparisonDiffs(route: string, n: number): void {
    if (n > 0) this.diffs.inc({ route }, n);
  }

  /** Sampled comparisons skipped because COMPARE_IN_FLIGHT were being worked on (src/compare/legacy-side.ts). */
  comparisonsSkipped(read: { readonly skipped: number }): void {
    if (this.registry.getSingleMetric('gateway_comparisons_skipped')) return;
    this.gauge('gateway_comparisons_skipped', 'Sampled comparisons skipped: COMPARE_IN_FLIGHT were being worked on', () => read.skipped);
  }

  /** A gauge whose value is read at scrape time (the replica's age and lag, once it exists). */
  gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** Pipelined requests waiting for their connection's turn, and connections closed for piling them up (src/http/pipeline-cap.ts). */
  pipelines(read: { readonly waitingNow: number; readonly closed: number }): void {
    if (this.registry.getSingleMetric('gateway_pipelined_requests_waiting')) return;
    this.gauge('gateway_pipelined_requests_waiting', 'Requests read ahead on their connection, waiting for an earlier one to end', () => read.waitingNow);
    this.gauge('gateway_pipelined_connections_closed', 'Connections closed for waiting requests past a bound (connection, address, instance)',
      () => read.closed);
  }

  /** Logged-in users' request bodies: bytes in flight, and requests waiting their turn (src/http/body-gate.ts). */
  bodies(read: { held(): number; readonly queued: number }): void {
    if (this.registry.getSingleMetric('gateway_request_body_bytes')) return;
    this.gauge('gateway_request_body_bytes', 'Bytes of logged-in users\' request bodies in flight', () => read.held());
    this.gauge('gateway_request_bodies_waiting', 'Requests of logged-in users waiting for their body\'s turn', () => read.queued);
  }

  /** The replica (public name: the render index, `gateway_index_*`): teams' ages (max and a histogram, no label per team), what memory holds. */
  replica(read: { ages(): number[]; bounds(): number[]; rendersInMemory: number; answers: { hits: number; misses: number; size: number } }): void {
    if (this.registry.getSingleMetric('gateway_index_teams')) return;
    const answers = read.answers;
    this.gauge('gateway_answer_cache_entries', 'Answers of replica reads kept (serialised) for identical reads', () => answers.size);
    let seen = { hits: 0, misses: 0 };
    const sync = () => {
      hits.inc(answers.hits - seen.hits);
      misses.inc(answers.misses - seen.misses);
      seen = { hits: answers.hits, misses: answers.misses };
    };
    const hits: Counter = new Counter({
      name: 'gateway_answer_cache_hits_total', help: 'Replica reads answered with a kept answer', registers: [this.registry], collect: sync,
    });
    const misses: Counter = new Counter({
      name: 'gateway_answer_cache_misses_total',
      help: 'Replica reads whose kept answer was missing, outdated or past its age',
      registers: [this.registry],
      collect: sync,
    });
    this.gauge('gateway_index_age_max_seconds', 'Age of the least recently synced team in the render index', () => Math.max(0, ...read.ages()) / 1000);
    this.gauge('gateway_index_bound_max_seconds', 'Largest staleness bound of a team in the render index (computed from its projects and budget)',
      () => Math.max(0, ...read.bounds()) / 1000);
    new Histogram({
      name: 'gateway_index_bound_seconds',
      help: 'Staleness bounds of the teams in the replica at scrape time',
      buckets: [1, 2, 5, 10, 30, 60, 120, 300, 900],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const b of read.bounds()) this.observe(b / 1000);
      },
    });
    this.gauge('gateway_index_teams', 'Teams whose render index is in memory and backfilled', () => read.ages().length);
    this.gauge('gateway_index_renders', 'Renders held in the render index in memory', () => read.rendersInMemory);
    new Histogram({
      name: 'gateway_index_age_seconds',
      help: 'Ages of the teams in the replica at scrape time',
      buckets: [1, 2, 5, 10, 30, 60, 120, 300, 900],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const a of read.ages()) this.observe(a / 1000);
      },
    });
  }

  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** What the registry asks of a metric: its samples at scrape time, in prom-client's shape. */
interface Collected {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  reset(): void;
  get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: Sample[] }>;
}

interface Sample { labels: Record<string, string | number>; value: number; metricName?: string }

/**
 * Legacy requests by route template × method × status: a count and a latency histogram per series, kept in plain arrays
 * (an observation is a map look-up and a few additions; a labelled prom-client observe hashed its labels every time, ~3 %
 * of a warm read) and handed to the registry at scrape time as a counter and a histogram.
 */
class RequestSeries {
  private readonly all = new Map<string, { labels: Record<string, string>; buckets: number[]; sum: number; count: number }>();

  constructor(private readonly bounds: readonly number[]) {}

  observe(route: string, method: string, status: number, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    let s = this.all.get(key);
    if (!s) {
      s = { labels: { route, method, status: String(status) }, buckets: this.bounds.map(() => 0), sum: 0, count: 0 };
      this.all.set(key, s);
    }
    s.count++;
    s.sum += seconds;
    const i = this.bounds.findIndex((b) => seconds <= b);
    if (i >= 0) s.buckets[i] = (s.buckets[i] as number) + 1;
  }

  counter(name: string, help: string): Collected {
    return {
      name, help, type: 'counter', reset: () => this.all.clear(),
      get: async () => {
        const values = [...this.all.values()].map((s) => ({ labels: s.labels, value: s.count }));
        return { name, help, type: 'counter', aggregator: 'sum', values };
      },
    };
  }

  histogram(name: string, help: string): Collected {
    return {
      name, help, type: 'histogram', reset: () => this.all.clear(),
      get: async () => {
        const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
        for (const s of this.all.values()) {
          let acc = 0;
          this.bounds.forEach((le, i) => {
            acc += s.buckets[i] as number;
            values.push({ labels: { le, ...s.labels }, value: acc, metricName: `${name}_bucket` });
          });
          values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${name}_bucket` });
          values.push({ labels: s.labels, value: s.sum, metricName: `${name}_sum` });
          values.push({ labels: s.labels, value: s.count, metricName: `${name}_count` });
        }
        return { name, help, type: 'histogram', aggregator: 'sum', values };
      },
    };
  }
}
