import { Counter, type Registry } from 'prom-client';
import type { ChangeBus } from '../store/changes.js';
import { DAY_MS, DEPRECATIONS_TOPIC, type CallDelta, type DeprecationStore, type StoredRule } from '../store/deprecations.js';
import { parseRules, RuleSet, unknownRoutes, verdictAt, type Rule, type Verdict } from './rules.js';

/** A rules body that does not validate: every problem with its path (the route answers 400 naming the first). */
export class RulesError extends Error {
  constructor(readonly problems: readonly { path: string; message: string }[]) {
    super(problems.map((p) => `${p.path}: ${p.message}`).join('; '));
    this.name = 'RulesError';
  }
}

export interface DeprecationsOptions {
  readonly now: () => number;
  /** Flush period of the counts; 0: only on flush()/close(). */
  readonly flushEveryMs?: number;
  /** Distinct (rule, client, day) entries held between flushes; past it, calls are counted as dropped. */
  readonly maxPending?: number;
}

/**
 * The deprecation rules every instance applies: held in memory, read from the store at start, again whenever any
 * instance announces a change (or the change bus may have lost one), and the calls they match counted per rule,
 * client and day (flushed to the store off the request path) and by rule in the metrics (no client label).
 */
export class Deprecations {
  private set = new RuleSet([]);
  private stored: StoredRule[] = [];
  /** Every legacy route (`METHOD /template`) the app registered: a rule must name one. */
  readonly routes = new Set<string>();
  private pending = new Map<string, CallDelta>();
  private reading: Promise<void> = Promise.resolve();
  private again = false;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly counter: Counter<'rule' | 'outcome'>;
  dropped = 0;

  constructor(private readonly store: DeprecationStore, bus: Pick<ChangeBus, 'on' | 'onResync'>, registry: Registry, private readonly o: DeprecationsOptions) {
    this.counter = new Counter({
      name: 'gateway_deprecated_calls_total',
      help: 'Legacy calls matched by a deprecation rule, by rule and outcome (served with headers, refused, observed: refused in observe mode)',
      labelNames: ['rule', 'outcome'],
      registers: [registry],
    });
    bus.on(DEPRECATIONS_TOPIC, () => this.reload());
    bus.onResync(() => this.reload());
    if ((o.flushEveryMs ?? 2000) > 0) this.timer = setInterval(() => void this.flush().catch(() => {}), o.flushEveryMs ?? 2000).unref();
  }

  /** Reads the rules from the store (at start; then on every change heard). */
  async load(): Promise<void> {
    this.reload();
    await this.idle();
  }

  /** Resolves once every reading of the rules asked for so far has ended (tests wait on it after hearing a change). */
  async idle(): Promise<void> {
    let seen: Promise<void> | undefined;
    while (seen !== this.reading) {
      seen = this.reading;
      await seen;
    }
  }

  /** Reads the rules again; a change heard during a reading makes one more (never two at once, never one lost). */
  private reload(): void {
    if (this.again) return;
    this.again = true;
    this.reading = this.reading.then(async () => {
      this.again = false;
      try {
        const stored = await this.store.rules();
        const rules = stored.map((s) => s.rule as Rule);
        // a rule no longer set leaves the metric: its label values stay as many as the rules
        const kept = new Set(rules.map((r) => r.id));
        for (const gone of this.stored) {
          if (!kept.has(gone.id)) for (const outcome of ['served', 'refused', 'observed']) this.counter.remove({ rule: gone.id, outcome });
        }
        this.stored = stored;
        this.set = new RuleSet(rules);
      } catch {
        // the store is away: the rules held stay until the next change or resync
      }
    });
  }

  /** The rules as set, each with when its id was first set. */
  list(): readonly StoredRule[] {
    return this.stored;
  }

  /** Validates and sets the rules (every instance follows); a bad body throws RulesError naming each field. */
  async replace(body: unknown): Promise<readonly StoredRule[]> {
    const parsed = parseRules(body);
    const problems = parsed.rules && this.routes.size ? unknownRoutes(parsed.rules, this.routes) : parsed.problems;
    if (!parsed.rules || problems.length) throw new RulesError(problems);
    await this.store.replace(parsed.rules, this.o.now());
    this.reload();
    await this.idle();
    return this.stored;
  }

  /** The counted calls (flushed so far), of one principal's clients or of all. */
  calls(principal?: string): ReturnType<DeprecationStore['calls']> {
    return this.store.calls(principal);
  }

  get empty(): boolean {
    return this.set.empty;
  }

  /** The rule a request would fall under, not counted (the migration report). */
  ruleFor(method: string, template: string, principal: string, family: string): Rule | undefined {
    return this.set.pick(method, template, principal, family)?.rule;
  }

  /** The rule a request falls under at `now`, counted; undefined when none applies. */
  decide(method: string, template: string, principal: string, family: string, now: number): Verdict | undefined {
    const c = this.set.pick(method, template, principal, family);
    if (!c) return undefined;
    const v = verdictAt(c, now);
    const outcome = v.refuse ? 'refused' : v.state === 'announced' ? 'served' : 'observed';
    this.counter.inc({ rule: c.rule.id, outcome });
    this.count(c.rule.id, `${principal}~${family}`, now, outcome);
    return v;
  }

  private count(rule: string, client: string, now: number, outcome: 'served' | 'refused' | 'observed'): void {
    const day = Math.floor(now / DAY_MS);
    const k = `${rule}\u0000${client}\u0000${day}`;
    let d = this.pending.get(k);
    if (!d) {
      if (this.pending.size >= (this.o.maxPending ?? 10_000)) { this.dropped++; return; }
      d = { rule, client, day, calls: 0, refused: 0, observed: 0, last: now };
      this.pending.set(k, d);
    }
    d.calls++;
    if (outcome === 'refused') d.refused++;
    if (outcome === 'observed') d.observed++;
    d.last = now;
  }

  async flush(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending = new Map();
    await this.store.addCalls(batch, this.o.now());
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush().catch(() => {});
    await this.idle();
  }
}
