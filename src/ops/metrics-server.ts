import { createServer, type Server } from 'node:http';
import type { Metrics } from './metrics.js';

/** /metrics without authentication on its own port (METRICS_PORT, bound to METRICS_HOST): for a scraper inside the network. */
export async function startMetricsServer(metrics: Metrics, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') { res.writeHead(404).end(); return; }
    metrics.text().then(
      (m) => res.writeHead(200, { 'content-type': m.contentType }).end(m.body),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, () => resolve()));
  return server;
}
