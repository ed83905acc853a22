import { createSimulator, type Simulator, type SimulatorOptions } from '../../src/sim/server.js';

export interface RunningSim { sim: Simulator; url: string; keys: { user_id: string; email: string | null; api_key: string; teams: { id: string; role: string | null }[] }[] }

/** A real simulator on a loopback port chosen by the OS. */
export async function startSim(options: SimulatorOptions = {}): Promise<RunningSim> {
  const sim = createSimulator({ seed: 1, scale: 'tiny', clock: 'manual', ...options });
  const url = await sim.listen(0);
  return { sim, url, keys: sim.world.listKeys() };
}

export async function call(url: string, path: string, init: { method?: string; key?: string; body?: unknown } = {}) {
  const res = await fetch(url + path, {
    method: init.method ?? 'GET',
    headers: { ...(init.key ? { authorization: `Bearer ${init.key}` } : {}), ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as any) : undefined };
}
