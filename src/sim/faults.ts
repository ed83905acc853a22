/** Faults the simulator injects into /v1 requests, settable at runtime through POST /_sim/faults. */
export type FaultKind = 'error500' | 'reset' | 'rate_limit' | 'lost_response';

export interface FaultRule {
  readonly kind: FaultKind;
  /** Share of matching requests hit (0..1); default 1. */
  readonly rate?: number;
  /** Hit only the next N matching requests; default unlimited. */
  count?: number;
  readonly method?: string;
  /** Route template (`/v1/renders/:id`) or path prefix (`/v1/renders`). */
  readonly path?: string;
  readonly retry_after_s?: number;
}

export interface FaultSettings {
  latency_ms: number;
  rules: FaultRule[];
}

export class FaultInjector {
  settings: FaultSettings = { latency_ms: 0, rules: [] };
  constructor(private readonly random: () => number = Math.random) {}

  set(settings: Partial<FaultSettings>): void {
    this.settings = {
      latency_ms: settings.latency_ms ?? this.settings.latency_ms,
      rules: settings.rules ? settings.rules.map((r) => ({ ...r })) : this.settings.rules,
    };
  }

  clear(): void {
    this.settings = { latency_ms: 0, rules: [] };
  }

  /** The fault for this request, if any (consumes a count). */
  pick(method: string, route: string, path: string): FaultRule | undefined {
    for (const rule of this.settings.rules) {
      if (rule.method && rule.method.toUpperCase() !== method) continue;
      if (rule.path && rule.path !== route && !path.startsWith(rule.path)) continue;
      if (rule.count !== undefined && rule.count <= 0) continue;
      if (this.random() >= (rule.rate ?? 1)) continue;
      if (rule.count !== undefined) rule.count -= 1;
      return rule;
    }
    return undefined;
  }
}
