import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { ReceiverHealth } from '../../src/replica/sync/receiver-health.js';
import { lostWindow } from '../../src/replica/sync/webhook-trust.js';
import type { GapReason, WebhookGap, WebhookHealthStore } from '../../src/store/webhook-health.js';

const SPAN = 15_000;
const gap = (team: string, from: number, to: number, reason: GapReason): WebhookGap => ({ id: `${team}${from}`, team, from, to, reason });

describe('lostWindow (issue 43)', () => {
  it('an outage shorter than the retry span loses nothing; a longer one, or a refusal, does; windows after the last catch-up only', () => {
    expect(lostWindow([gap('', 0, SPAN - 1, 'receiver down')], 't', 0, SPAN, 1e6)).toBeNull();
    expect(lostWindow([gap('', 10, 10 + SPAN, 'receiver down')], 't', 0, SPAN, 1e6)).toEqual({ from: 10, to: 10 + SPAN });
    expect(lostWindow([gap('t', 5, 5, 'refused')], 't', 0, SPAN, 1e6)).toEqual({ from: 5, to: 5 });
    expect(lostWindow([gap('u', 5, 5, 'refused')], 't', 0, SPAN, 1e6)).toBeNull(); // another team's
    expect(lostWindow([gap('t', 5, 5, 'refused'), gap('', 100, 100 + SPAN, 'receiver down')], 't', 5, SPAN, 1e6)).toEqual({ from: 100, to: 100 + SPAN });
    // a run of refusals is acted on once none came for the span (more may follow); an outage found at start at once
    expect(lostWindow([gap('t', 5, 1_000, 'failed')], 't', 0, SPAN, 1_000 + SPAN - 1, true)).toBeNull();
    expect(lostWindow([gap('t', 0, 20_000, 'failed')], 't', 0, SPAN, 20_000 + SPAN, true)).toEqual({ from: 0, to: 20_000 });
    expect(lostWindow([gap('', 0, 20_000, 'receiver down')], 't', 0, SPAN, 20_000, true)).toEqual({ from: 0, to: 20_000 });
  });
});

/** The store's part as the health uses it, in memory (the SQLite and PostgreSQL statements run in test/replica/webhook-trust). */
function memoryStore() {
  const gaps = new Map<string, WebhookGap>();
  const writes: string[] = [];
  let n = 0;
  const store = {
    beat: async () => { writes.push('beat'); },
    receiversElsewhere: async () => [],
    forgetReceivers: async () => undefined,
    newGap: (team: string, from: number, to: number, reason: GapReason) => ({ id: `g${++n}`, team, from, to, reason }),
    putGap: async (g: WebhookGap) => {
      writes.push(gaps.has(g.id) ? 'extend' : 'add');
      const had = gaps.get(g.id);
      gaps.set(g.id, had && had.to >= g.to ? had : g);
    },
    dropCaughtUp: async (team: string, to: number) => { for (const [id, g] of gaps) if (g.team === team && g.to <= to) gaps.delete(id); },
    gapsAfter: async () => [...gaps.values()],
    pruneGaps: async () => undefined,
    checkedTo: async () => new Map<string, number>(),
    setCheckedTo: async () => undefined,
  };
  return { store: store as unknown as WebhookHealthStore, writes, gaps };
}

describe('ReceiverHealth refusals (issue 43)', () => {
  it('a flood of refused deliveries is one window, written about once a second; the team is caught up once it is over', async () => {
    const clock = new ManualClock(1_000_000);
    const { store, writes, gaps } = memoryStore();
    const h = new ReceiverHealth({
      store, clock, logger: pino({ level: 'silent' }), holder: 'me', registered: new Set(['t']), reconcileMs: 600_000, retrySpanMs: SPAN, beatMs: 10_000,
    });
    await h.open();
    expect(h.trusted('t', clock.now())).toBe(true);
    for (let i = 0; i < 1_000; i++) { h.refusal('t', 'refused'); clock.advance(3); }
    h.refusal('unregistered', 'refused'); // a team without a secret records nothing
    await new Promise((r) => setImmediate(r));
    expect(writes.filter((w) => w === 'add')).toHaveLength(1);
    expect(writes.filter((w) => w === 'extend').length).toBeLessThanOrEqual(3); // 3 s of refusals
    expect([...gaps.values()].map((g) => g.team)).toEqual(['t']);
    expect(h.trusted('t', clock.now())).toBe(false);
    expect(h.due('t', clock.now())).toBeNull(); // still under way
    clock.advance(SPAN);
    const w = h.due('t', clock.now());
    expect(w).toEqual({ from: 1_000_000, to: 1_000_000 + 999 * 3 });
    await h.caughtUp('t', w!);
    expect(h.trusted('t', clock.now())).toBe(true);
  });
});

describe('ReceiverHealth windows stay a few rows a team (attack pass 36, H-1)', () => {
  it('refusals however far apart grow one window until the team is caught up; then it is dropped', async () => {
    const clock = new ManualClock(2_000_000);
    const { store, gaps } = memoryStore();
    const h = new ReceiverHealth({
      store, clock, logger: pino({ level: 'silent' }), holder: 'me', registered: new Set(['t', 'u']), reconcileMs: 600_000, retrySpanMs: SPAN, beatMs: 10_000,
    });
    await h.open();
    // a day's drip: an unsigned post every 16 s (each past the retry span), for two teams, a few 5xx among them
    for (let i = 0; i < 5_400; i++) {
      h.refusal('t', 'refused');
      h.refusal('u', i % 100 === 0 ? 'failed' : 'refused');
      clock.advance(16_000);
      if (i % 40 === 0) await h.tick();
    }
    await h.tick();
    // one window a team and kind, not one a refusal (the rule before kept 5 400 rows a team, re-read every beat)
    expect([...gaps.values()].map((g) => `${g.team} ${g.reason}`).sort()).toEqual(['t refused', 'u failed', 'u refused']);
    const w = h.due('t', clock.now());
    expect(w).toEqual({ from: 2_000_000, to: 2_000_000 + 5_399 * 16_000 });
    await h.caughtUp('t', w!);
    expect([...gaps.values()].map((g) => g.team).sort()).toEqual(['u', 'u']);
    expect(h.trusted('t', clock.now())).toBe(true);
    expect(h.trusted('u', clock.now())).toBe(false);
    // a refusal after the catch-up: a new window of its own
    h.refusal('t', 'refused');
    expect([...gaps.values()].filter((g) => g.team === 't')).toHaveLength(1);
    expect(h.trusted('t', clock.now())).toBe(false);
  });
});
