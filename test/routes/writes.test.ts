import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';

/** The write routes follow ROUTE_MODES per prefix: /render (the legacy document's singular path) is a prefix of its own. */
let legacy: Server;
let legacyUrl = '';
beforeAll(async () => {
  legacy = createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ data: { legacy: `${req.method} ${req.url}` } })); });
  await new Promise<void>((r) => legacy.listen(0, '127.0.0.1', () => r()));
  legacyUrl = `http://127.0.0.1:${(legacy.address() as { port: number }).port}`;
});
afterAll(async () => new Promise<void>((r) => legacy.close(() => r())));

describe('write routes and route modes', () => {
  it('/renders in proxy mode passes its writes through, /render/:id stays translated; /render in proxy mode passes that one', async () => {
    const id = '7d444840-9dc0-11d1-b245-5ffdce74fad2';
    for (const [modes, proxiedPaths] of [
      [{ '/renders': 'proxy' }, [`/renders/${id}`, `/items/renders/${id}`, '/items/renders']],
      [{ '/render': 'proxy' }, [`/render/${id}`]],
    ] as const) {
      const gw = await startGateway({ ROUTE_MODES: JSON.stringify(modes), LEGACY_BASE_URL: legacyUrl });
      try {
        for (const url of [`/renders/${id}`, `/items/renders/${id}`, '/items/renders', `/render/${id}`]) {
          const res = await gw.app.inject({ method: 'PATCH', url, payload: { title: 'x' } });
          const byLegacy = (proxiedPaths as readonly string[]).includes(url);
          expect(res.headers['x-gateway-answered-by'], `${JSON.stringify(modes)} ${url}`).toBe(byLegacy ? 'legacy' : 'gateway');
          if (!byLegacy) expect(res.statusCode).toBe(403); // no token: the public role
        }
        // unknown collections stay the gateway's 403 in every mode
        const nope = await gw.app.inject({ method: 'DELETE', url: `/items/nope/${id}` });
        expect([nope.statusCode, nope.headers['x-gateway-answered-by']]).toEqual([403, 'gateway']);
      } finally {
        await gw.close();
      }
    }
  });
});
