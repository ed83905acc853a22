import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCallGate } from '../../src/lib/call-gate.js';
import { snippetRunner } from '../../src/migrate/snippet-run.js';
import type { Snippets } from '../../src/migrate/snippets.js';

/** An upstream that answers each request with what it saw (method, path, a header, the body) and counts them. */
let upstream: http.Server;
let base: string;
let seen = 0;

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    seen++;
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end(JSON.stringify({ method: req.method, path: req.url, auth: req.headers.authorization ?? null, body: Buffer.concat(parts).toString() }));
    });
  });
  await new Promise<void>((ok) => upstream.listen(0, '127.0.0.1', () => ok()));
  base = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((ok) => upstream.close(() => ok())));

describe('a call gate: a pass-through that forwards at most N calls', () => {
  it('forwards requests as they are (method, path behind the base path, headers, body) and refuses the ones past its bound', async () => {
    const before = seen;
    const gate = await openCallGate(`${base}/api/`, 3);
    try {
      const answers = [];
      for (let i = 0; i < 5; i++) {
        const r = await fetch(`${gate.url}/v1/things?i=${i}`, { method: 'POST', headers: { authorization: 'Bearer k' }, body: `b${i}` });
        answers.push({ status: r.status, upstream: r.headers.get('x-upstream'), body: await r.json() });
      }
      expect(answers.slice(0, 3)).toEqual([0, 1, 2].map((i) => ({
        status: 201, upstream: 'yes', body: { method: 'POST', path: `/api/v1/things?i=${i}`, auth: 'Bearer k', body: `b${i}` },
      })));
      for (const a of answers.slice(3)) {
        expect(a.status).toBe(429);
        expect(a.upstream).toBeNull();
      }
      expect({ forwarded: gate.forwarded, refused: gate.refused, reached: seen - before }).toEqual({ forwarded: 3, refused: 2, reached: 3 });
    } finally {
      await gate.close();
    }
  });

  it("a snippet that wants more v1 calls than a run may make is not compared, and says why (the proof's snippets were unbounded)", async () => {
    // a node snippet calling v1 ten times, then printing how many answered
    const node = [
      'async function many(v1, key) {',
      '  let ok = 0;',
      '  for (let i = 0; i < 10; i++) if ((await fetch(`${v1}/v1/x/${i}`, { headers: { authorization: `Bearer ${key}` } })).ok) ok++;',
      '  return { ok };',
      '}',
    ].join('\n');
    const snippets = { node, python: '', curl: '', partial: [] } as unknown as Snippets;
    const before = seen;
    const tight = await snippetRunner(base, undefined, 4).run('node', snippets, 'many', 'secret-key', {});
    expect(tight).toEqual({ ok: false, notCompared: true, why: "the node snippet needs more than 4 v1 calls (the proof's bound for one run): not compared" });
    expect(seen - before).toBe(4);
    // within the bound, the same snippet runs and answers
    const roomy = await snippetRunner(base, undefined, 10).run('node', snippets, 'many', 'secret-key', {});
    expect(roomy).toEqual({ ok: true, output: { ok: 10 } });
    expect(seen - before).toBe(14);
  }, 60_000);
});
