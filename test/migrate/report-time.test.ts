import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proofDeps } from '../../src/admin/migration-report.js';
import { keptAlive } from '../../src/http/keep-alive.js';
import { clientReports, type ClientReport } from '../../src/migrate/report.js';
import { shapeKey } from '../../src/migrate/shape.js';
import { ClientShapeStore } from '../../src/store/client-shapes.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

/**
 * A migration report's proofs share a time budget among its clients (one client's many shapes never take another's
 * turn), stop once the report's reader has gone, and a report being proven sends a byte often enough that its socket is
 * never idle — attack pass 17, F2: 200 shapes of one client took longer than the idle timeout, the operator got a 200
 * with a cut body, and the proofs went on for minutes after he had gone.
 */
let gw: TestGateway;
let user: string;
beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false' });
  user = await gw.addUser(0, 'time@example.com', 'time-password-123');
}, 60_000);
afterAll(async () => gw?.close());

const FIELDS = ['id', 'id,title', 'id,status', 'title', 'status', 'id,date_created', 'date_created', 'id,title,status'];

/** `n` shapes of renders for `client` (each its own fields), stored as the recorder stores them. */
async function shapes(client: string, n: number): Promise<void> {
  const rows = Array.from({ length: n }, (_, i) => {
    const shape = gw.deps.shapes.shapeOf({ method: 'GET', route: '/renders', query: { fields: FIELDS[i] as string, limit: '3' }, question: `${client}-${i}` });
    return { client, user_id: user, shape_key: shapeKey(shape), shape: JSON.stringify({ ...shape, key: shapeKey(shape) }), count: 1, errors: 0, ms_total: 1, ms_max: 1, calls: '{}',
      first_seen: Date.now() - 1000 + i, last_seen: Date.now() - 500 + i, compared: 0, differing: 0 };
  });
  await gw.deps.db.kysely.insertInto('client_shapes').values(rows).execute();
}

const TIMED = /not proven: the report's proof time \(MIGRATE_PROOF_BUDGET_MS/;

describe("a migration report's proofs, bounded in time", () => {
  it('share the time among the clients: a client with many shapes spends its share, the next is still proven', async () => {
    await gw.deps.db.kysely.deleteFrom('client_shapes').execute();
    await shapes(`user:${user}~curl`, 6);
    await shapes(`user:${user}~python-urllib`, 3);
    // the clock moves 1 000 a proof asking the gateway (a proof asks it at least once): a budget of 2 500 for two clients
    let t = 0;
    const base = proofDeps(gw.deps, (o) => gw.app.inject(o as never));
    const proofs = { ...base, legacy: async (...a: Parameters<typeof base.legacy>) => { t += 1000; return base.legacy(...a); } };
    const got: ClientReport[] = [];
    for await (const c of clientReports(new ClientShapeStore(gw.deps.db.kysely), proofs, {
      prove: true, now: Date.now(), retentionDays: 30, shapesPerClient: 200, limitDefault: 100, mappings: gw.deps.mappings,
      proofTime: { budgetMs: 2500, clock: () => t },
    })) got.push(c);
    expect(got.map((c) => c.shapes.length)).toEqual([6, 3]);
    for (const c of got) {
      const results = c.shapes.map((s) => s.proof?.result);
      // each client's first shape proven; the rest of its shapes said why not, past its share
      expect(results[0], c.client).toBe('equal');
      const late = c.shapes.filter((s) => TIMED.test(s.proof?.reason ?? ''));
      expect(late.length, c.client).toBeGreaterThan(0);
      expect(late.every((s) => s.proof?.result === 'not run' && s.proof.v1Calls === 0)).toBe(true);
      expect(c.shapes.every((s) => s.proof?.result === 'equal' || TIMED.test(s.proof?.reason ?? '')), JSON.stringify(results)).toBe(true);
    }
  });

  it('stop once the reader has gone: no further client is read nor proven', async () => {
    await gw.deps.db.kysely.deleteFrom('client_shapes').execute();
    await shapes(`user:${user}~curl`, 2);
    await shapes(`user:${user}~node`, 2);
    const gone = new AbortController();
    const reports = clientReports(new ClientShapeStore(gw.deps.db.kysely), proofDeps(gw.deps, (o) => gw.app.inject(o as never)), {
      prove: true, now: Date.now(), retentionDays: 30, shapesPerClient: 200, limitDefault: 100, mappings: gw.deps.mappings,
      proofTime: { budgetMs: 600_000, clock: () => performance.now(), signal: gone.signal },
    });
    const first = await reports.next();
    expect(first.done).toBe(false);
    gone.abort();
    expect((await reports.next()).done).toBe(true);
  });

  it('a report over HTTP: the operator gone after its head, the proofs stop (one at most finishes)', async () => {
    await gw.deps.db.kysely.deleteFrom('client_shapes').execute();
    await shapes(`user:${user}~curl`, 8);
    let sessions = 0;
    const v1For = gw.deps.v1For;
    gw.deps.v1For = (id, meter, label) => {
      if (label === 'gateway-migrate-proof') sessions++;
      return v1For(id, meter, label);
    };
    try {
      const address = await gw.app.listen({ port: 0, host: '127.0.0.1' });
      await new Promise<void>((done, fail) => {
        const req = httpRequest(`${address}/_gateway/migrate`, { headers: { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` } }, (res) => {
          res.once('data', () => { req.destroy(); done(); }); // the head came: the operator leaves
        });
        req.on('error', (e) => (req.destroyed ? undefined : fail(e)));
        req.end();
      });
      // the proof under way when he left may finish; none starts after it
      let before = -1;
      while (before !== sessions) {
        before = sessions;
        await new Promise((r) => setTimeout(r, 1500));
      }
      expect(sessions).toBeLessThanOrEqual(2);
    } finally {
      gw.deps.v1For = v1For;
    }
  }, 60_000);
});

describe('a streamed JSON text kept alive', () => {
  it('sends a space whenever the next part is late, and the text parses the same', async () => {
    const parts = (async function* () {
      yield '{"data":[';
      await new Promise((r) => setTimeout(r, 120));
      yield '1,';
      await new Promise((r) => setTimeout(r, 120));
      yield '2]}';
    })();
    const out: string[] = [];
    for await (const p of keptAlive(parts, 30)) out.push(p);
    expect(out.filter((p) => p === ' ').length).toBeGreaterThanOrEqual(4);
    expect(out.filter((p) => p !== ' ')).toEqual(['{"data":[', '1,', '2]}']);
    expect(JSON.parse(out.join(''))).toEqual({ data: [1, 2] });
    // parts on time: no space
    const quick: string[] = [];
    for await (const p of keptAlive((async function* () { yield 'a'; yield 'b'; })(), 1000)) quick.push(p);
    expect(quick).toEqual(['a', 'b']);
  });
});
