import type { WebhookGap } from '../../store/webhook-health.js';

/** A window of possibly lost deliveries the team's renders must be walked again for. */
export interface CatchUpWindow {
  readonly from: number;
  readonly to: number;
}

/**
 * Whether a window lost deliveries. v1 tries a delivery five times, the retries 1, 2, 4 and 8 s apart: all five fall in
 * a window only when it lasts at least their span (`retrySpanMs`, 15 s when every attempt fails at once — a receiver
 * down refuses connections at once); a shorter outage loses nothing, v1's retries land after it. A refused delivery
 * (a bad signature: 401) is not retried: lost at once.
 */
export const lostIn = (g: WebhookGap, retrySpanMs: number): boolean => g.reason === 'refused' || g.to - g.from >= retrySpanMs;

/**
 * The windows, for one team, that lost deliveries since its last catch-up (`checkedTo`), as one window from the first's
 * start to the last's end (null: none). `ready`: only windows over — an outage found at start is; a run of refusals or
 * failures is once none came for the retry span (more may follow).
 */
export function lostWindow(
  gaps: readonly WebhookGap[], teamId: string, checkedTo: number, retrySpanMs: number, now: number, ready = false,
): CatchUpWindow | null {
  let from = Infinity;
  let to = -Infinity;
  for (const g of gaps) {
    if ((g.team !== '' && g.team !== teamId) || g.to <= checkedTo || !lostIn(g, retrySpanMs)) continue;
    if (ready && g.reason !== 'receiver down' && now - g.to < retrySpanMs) continue;
    from = Math.min(from, g.from);
    to = Math.max(to, g.to);
  }
  return to === -Infinity ? null : { from, to };
}
