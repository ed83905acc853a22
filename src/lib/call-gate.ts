import http from 'node:http';
import https from 'node:https';

/** A local pass-through to an HTTP base: what it forwarded and what it refused. */
export interface CallGate {
  /** The base URL to call instead of the upstream one (the upstream's path prefix kept behind it). */
  readonly url: string;
  /** Requests forwarded. */
  readonly forwarded: number;
  /** Requests refused past the bound (answered 429 without reaching the upstream). */
  readonly refused: number;
  close(): Promise<void>;
}

/**
 * Opens a pass-through on 127.0.0.1 (a port of its own) to `base` that forwards at most `most` requests — method, path,
 * headers and body streamed as they are — and answers every later one 429 without calling the upstream. A program handed
 * `url` instead of `base` (a snippet the migration proof runs) spends at most `most` of the upstream's calls, and the gate
 * tells whether it wanted more.
 */
export async function openCallGate(base: string, most: number): Promise<CallGate> {
  const upstream = new URL(base);
  const prefix = upstream.pathname.replace(/\/$/, '');
  const send = upstream.protocol === 'https:' ? https.request : http.request;
  let forwarded = 0;
  let refused = 0;
  const server = http.createServer((req, res) => {
    if (forwarded >= most) {
      refused++;
      req.resume();
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '60' });
      res.end(JSON.stringify({ error: { code: 'rate_limited', message: `more than ${most} calls through this gate` } }));
      return;
    }
    forwarded++;
    const target = new URL(`${prefix}${req.url ?? '/'}`, upstream);
    const out = send(target, { method: req.method, headers: { ...req.headers, host: upstream.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end();
    });
    req.pipe(out);
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get forwarded() { return forwarded; },
    get refused() { return refused; },
    close: () => new Promise<void>((ok) => {
      server.close(() => ok());
      server.closeAllConnections();
    }),
  };
}
