import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replay, ReplayInputError } from '../../src/compare/replay.js';
import { Comparator } from '../../src/compare/service.js';
import { loadConfig } from '../../src/config/schema.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { createLogger } from '../../src/log/logger.js';
import { CompareStore } from '../../src/store/compare.js';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';

/**
 * `replay` against two real HTTP servers: a legacy side that refuses some recorded credentials (401/403) and a gateway
 * side that answers every request as the legacy side would when it accepts them.
 */
const SECRETS = { ENCRYPTION_KEY: '11'.repeat(32), JWT_SECRET: 'test-secret-test-secret-test-secret-0123', GATEWAY_ADMIN_TOKEN: 'operator-token-0123456789' };
const PROJECTS = { data: [{ id: 1, title: 'first' }, { id: 2, title: 'second' }] };
const envelope = (message: string, code: string) => JSON.stringify({ errors: [{ message, extensions: { code } }] });

const serve = (answer: (req: IncomingMessage, res: ServerResponse) => void) => new Promise<{ server: Server; url: string }>((resolve) => {
  const server = createServer(answer);
  server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` }));
});

let legacy: { server: Server; url: string };
let gateway: { server: Server; url: string };
let deps: Deps;
let scratch: Db;
beforeAll(async () => {
  legacy = await serve((req, res) => {
    const auth = req.headers.authorization;
    res.setHeader('content-type', 'application/json');
    if (auth === 'Bearer expired') res.writeHead(401).end(envelope('Token expired.', 'TOKEN_EXPIRED'));
    else if (auth === undefined) res.writeHead(403).end(envelope("You don't have permission to access this.", 'FORBIDDEN'));
    else res.writeHead(200).end(JSON.stringify(PROJECTS));
  });
  gateway = await serve((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(PROJECTS)); });
  const dir = mkdtempSync(join(tmpdir(), 'gw-replay-'));
  deps = await createDeps(loadConfig({ ...SECRETS, V1_BASE_URL: 'http://127.0.0.1:9', DATABASE_URL: join(dir, 'gateway.db'), LOG_LEVEL: 'silent' }),
    createLogger('silent'));
  scratch = await openDb(':memory:');
  await migrate(scratch.kysely);
});
afterAll(async () => {
  legacy.server.close();
  gateway.server.close();
  await scratch.close();
  await deps.close();
});

const line = (authorization?: string, query = 'fields=id,title') =>
  JSON.stringify({ method: 'GET', path: '/projects', query, ...(authorization ? { headers: { authorization } } : {}) });

async function replayed(lines: string[]) {
  const store = new CompareStore(scratch.kysely);
  await store.clear();
  const options = { legacyUrl: legacy.url, gatewayUrl: gateway.url, gatewayToken: 'gateway-token', threshold: 0.05, source: 'requests.jsonl' };
  return replay(lines, options, new Comparator(deps.ids, store, deps.mappings.comparison), store);
}

describe('replay', () => {
  it('a request the legacy side refused (401/403) is not a difference: it is not compared, and named with its line', async () => {
    const forbidden = await replayed([line('Bearer good'), line(undefined, 'limit=2')]);
    expect(forbidden.report.routes.find((x) => x.route === 'GET /projects')).toMatchObject({ total: 1, differing: 0 });
    const r = await replayed([line('Bearer good'), line('Bearer expired', 'limit=1'), line(undefined, 'limit=2'), line('Bearer good', 'limit=3')]);
    const route = r.report.routes.find((x) => x.route === 'GET /projects');
    expect(route).toMatchObject({ total: 2, differing: 0 });
    expect(r.failing).toEqual([]);
    expect(r.refused).toEqual([
      { at: 'requests.jsonl:2', request: 'GET /projects', status: 401, code: 'TOKEN_EXPIRED' },
      { at: 'requests.jsonl:3', request: 'GET /projects', status: 403, code: 'FORBIDDEN' },
    ]);
    // not a green gate either: part of the recording was never compared
    expect(r.exitCode).toBe(1);
  });

  it('a malformed line is named by its file and line number before anything is sent', async () => {
    const bad = [line('Bearer good'), '', '{"method":"GET","path":', JSON.stringify({ method: 'GET' }), '[1]'];
    const e = await replayed(bad).then(() => undefined, (x: unknown) => x as Error);
    expect(e).toBeInstanceOf(ReplayInputError);
    expect(e!.message).toMatch(/^requests\.jsonl:3: not a JSON object \(.+\); requests\.jsonl:4: "path" must be a string starting with \/; requests\.jsonl:5: not a JSON object$/);
  });
});

describe('replay of aliased fields (as the compare mode records them)', () => {
  it('a field read under an alias is recorded under the field it copies, and a secret one redacted by its name', async () => {
    // the two sides differ on the aliased field: a password hash on the legacy side, another on the gateway's
    const side = (hash: string, title: string) => serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 1, pw: hash, t: title }] }));
    });
    const [old, gw] = [await side('$argon2id$v=19$legacy-hash', 'old title'), await side('$argon2id$v=19$gateway-hash', 'new title')];
    try {
      const store = new CompareStore(scratch.kysely);
      await store.clear();
      const options = { legacyUrl: old.url, gatewayUrl: gw.url, gatewayToken: 'gateway-token', threshold: 0.05, source: 'requests.jsonl' };
      const lines = [
        JSON.stringify({ method: 'GET', path: '/users', query: 'fields=id,pw,t&sort=id&alias[pw]=password&alias[t]=title', headers: { authorization: 'Bearer good' } }),
        JSON.stringify({ method: 'GET', path: '/users', query: { fields: 'id,pw,t', sort: 'id', alias: '{"pw":"password","t":"title"}' }, headers: { authorization: 'Bearer good' } }),
      ];
      const r = await replay(lines, options, new Comparator(deps.ids, store, deps.mappings.comparison), store);
      const route = r.report.routes.find((x) => x.route === 'GET /users')!;
      expect(route).toMatchObject({ total: 2, differing: 2 });
      // a recorded query the parser refuses (past 1 000 objects and lists) names no alias: compared as sent, the run goes on
      const huge = Array.from({ length: 600 }, (_, i) => `${i}[a][b]=1`).join('&');
      const more = await replay([JSON.stringify({ method: 'GET', path: '/users', query: huge, headers: { authorization: 'Bearer good' } })],
        options, new Comparator(deps.ids, store, deps.mappings.comparison), store);
      expect(more.report.routes.find((x) => x.route === 'GET /users')).toMatchObject({ total: 3, differing: 3 });
      const paths = route.fields.filter((f) => !f.noise).map((f) => `${f.kind} ${f.path}`).sort();
      expect(paths).toEqual(['value data[].password (alias)', 'value data[].title (alias)']);
      const pw = route.fields.find((f) => f.path === 'data[].password (alias)')!;
      expect(pw.count).toBe(2);
      const kept = JSON.stringify(route.fields);
      expect(kept).not.toContain('legacy-hash');
      expect(kept).not.toContain('gateway-hash');
      // a field that is no secret keeps its values
      expect(JSON.parse(route.fields.find((f) => f.path === 'data[].title (alias)')!.samples[0]!.legacy!)).toBe('old title');
    } finally {
      old.server.close();
      gw.server.close();
    }
  });
});
