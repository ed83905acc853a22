import type { V1CallInfo } from './client.js';

/**
 * The spare GET attempts one legacy request may spend past V1_RETRIES on any one call (V1_RETRY_BUDGET_PER_READ, shared
 * by every call of the request). A read of a whole scope makes a few hundred calls; under a fault rate v1 survives
 * (some 500s, some resets), one of them exhausting its own retries would fail the whole read. Spares are given only
 * once v1 has answered this request (it is flaky, not down: a v1 that answers nothing fails as fast as before), and a
 * call takes at most as many spares as its own retries.
 */
export class SpareRetries {
  private left: number;
  private answered = 0;
  /** Spare attempts taken so far (explain). */
  used = 0;

  constructor(budget: number) {
    this.left = budget;
  }

  /** Every exchange of the request (a 2xx proves v1 answers). */
  seen(info: V1CallInfo): void {
    if (info.status !== null && info.status >= 200 && info.status < 300) this.answered++;
  }

  /** One more attempt for a call past its own retries: true when granted (and counted). */
  take(): boolean {
    if (this.left <= 0 || this.answered === 0) return false;
    this.left--;
    this.used++;
    return true;
  }
}
