import type { TestGateway } from './gateway.js';

/** Until the replica holds every team in reach of `token`'s key (the ids answered are then the replica's); throws after ~3 s of tries. */
export async function replicaReady(gw: TestGateway, token: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    await gw.get('/renders?limit=1&fields=id', token);
    const s = await gw.deps.replica!.status();
    if (s.length > 0 && s.every((x) => x.state === 'ready')) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the replica did not become ready');
}
