import { errors } from '../errors/catalog.js';
import type { V1CallInfo, V1Meter } from '../v1/client.js';
import type { SpareRetries } from '../v1/spare-retries.js';

/** Counts one legacy request's v1 work (explain output) and enforces its call budget. */
export class CallMeter implements V1Meter {
  calls = 0;
  pages = 0;
  records = 0;
  coalesced = 0;
  cacheHits = 0;
  readonly byEndpoint = new Map<string, number>();
  constructor(
    private readonly budget: number,
    private readonly onRefused?: () => void,
    /** The request's spare GET attempts past V1_RETRIES (none: a call's own retries only). */
    private readonly spares?: SpareRetries,
  ) {}

  onCall(info: V1CallInfo): void {
    this.calls++;
    this.spares?.seen(info);
    const ep = `${info.method} ${info.path.split('?')[0]?.replace(/\/(rend|proj|team|tpl|user)_[^/]+/, '/:id')}`;
    this.byEndpoint.set(ep, (this.byEndpoint.get(ep) ?? 0) + 1);
  }

  spareRetry(): boolean {
    return this.spares?.take() ?? false;
  }

  onCoalesced(): void {
    this.coalesced++;
  }

  /** Called before each v1 call the planner is about to make. */
  reserve(n = 1): void {
    if (this.calls + n > this.budget) {
      this.onRefused?.();
      throw errors.invalidQuery([
        `This query needs more than ${this.budget} calls to the v1 API. Narrow it: ` +
          'filter on project or account (filter[project][_eq]=…), ask for fewer items (limit), ' +
          'or drop meta=filter_count/total_count and aggregates over everything',
      ]);
    }
  }

  summary(): Record<string, unknown> {
    return {
      v1_calls: this.calls,
      pages: this.pages,
      records_scanned: this.records,
      coalesced: this.coalesced,
      cache_hits: this.cacheHits,
      by_endpoint: Object.fromEntries(this.byEndpoint),
      ...(this.spares?.used ? { spare_retries: this.spares.used } : {}),
    };
  }
}
