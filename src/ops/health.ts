import type { Mappings } from '../config/mappings.js';
import { pingDb, type Db } from '../store/db.js';
import type { HealthStatus, Lifecycle, V1Health } from './v1-health.js';

/** What the health checks read, given by the composition root. */
export interface HealthDeps {
  readonly db: Db;
  readonly v1Health: Pick<V1Health, 'check'>;
  readonly lifecycle: Pick<Lifecycle, 'draining'>;
  readonly mappings: Pick<Mappings, 'schemas'>;
}

export interface HealthCheck {
  readonly status: HealthStatus;
  readonly componentType: string;
  readonly observedValue?: number | string;
  readonly observedUnit?: string;
  readonly threshold?: number;
  readonly output?: string;
}
export interface HealthReport {
  readonly status: HealthStatus;
  readonly checks: Record<string, HealthCheck[]>;
}

const worst = (a: HealthStatus, b: HealthStatus): HealthStatus =>
  a === 'error' || b === 'error' ? 'error' : a === 'warn' || b === 'warn' ? 'warn' : 'ok';
/** Store round trips slower than this are a warning (Directus's database threshold). */
const STORE_THRESHOLD_MS = 150;

/** The store answers within its time box (one `select 1`). */
export async function storeCheck(deps: HealthDeps): Promise<HealthCheck> {
  const started = performance.now();
  try {
    await pingDb(deps.db);
    const ms = Math.round((performance.now() - started) * 1000) / 1000;
    return {
      status: ms > STORE_THRESHOLD_MS ? 'warn' : 'ok',
      componentType: 'datastore',
      observedValue: ms,
      observedUnit: 'ms',
      threshold: STORE_THRESHOLD_MS,
    };
  } catch (e) {
    return { status: 'error', componentType: 'datastore', output: `the store did not answer: ${(e as Error).message}` };
  }
}

/**
 * Directus's /server/health in its shape (`application/health+json`): the store, v1 reachability from the gateway's
 * recent calls, the mappings; `error` only for what stops the gateway from answering anything (the store).
 */
export async function healthReport(deps: HealthDeps): Promise<HealthReport> {
  const store = await storeCheck(deps);
  const v1 = deps.v1Health.check();
  const checks: Record<string, HealthCheck[]> = {
    'store:responseTime': [store],
    'v1:reachability': [
      {
        status: v1.status,
        componentType: 'component',
        observedValue: v1.failures,
        observedUnit: 'failed calls in the last minute',
        output: `${v1.calls} calls, ${v1.failures} failed${v1.lastOkAt ? `; last answer ${new Date(v1.lastOkAt).toISOString()}` : ''}`,
      },
    ],
    'mappings:loaded': [
      { status: 'ok', componentType: 'component', observedValue: Object.keys(deps.mappings.schemas).length, observedUnit: 'resources' },
    ],
    'lifecycle:draining': [
      { status: deps.lifecycle.draining ? 'warn' : 'ok', componentType: 'system', observedValue: String(deps.lifecycle.draining) },
    ],
  };
  // v1 down makes the gateway degraded, not dead: a warning at worst, so orchestrators keep it (they watch /healthz)
  const status = worst(store.status, v1.status === 'error' ? 'warn' : v1.status);
  return { status: worst(status, deps.lifecycle.draining ? 'warn' : 'ok'), checks };
}

/** Ready to serve: store up, mappings loaded, not draining. */
export async function readiness(deps: HealthDeps): Promise<{ ready: boolean; reasons: string[] }> {
  const reasons: string[] = [];
  if (deps.lifecycle.draining) reasons.push('draining');
  const store = await storeCheck(deps);
  if (store.status === 'error') reasons.push('store unavailable');
  if (Object.keys(deps.mappings.schemas).length === 0) reasons.push('mappings not loaded');
  return { ready: reasons.length === 0, reasons };
}
