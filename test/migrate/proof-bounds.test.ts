import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internalHeaders } from '../../src/compare/legacy-side.js';
import { INTERNAL_ANSWER_BYTES } from '../../src/http/held-answer.js';
import { equivalentOfShape } from '../../src/migrate/instantiate.js';
import { prove, PROOF_PATHS } from '../../src/migrate/prove.js';
import { proofDeps } from '../../src/admin/migration-report.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 38 (attack pass 2026-11-28, N3): a proof re-asks the gateway in process, which buffers the whole answer — an
 * 8 GB answer ended the gateway (RangeError in Buffer.concat) — and listed every differing path (840 002 for one shape).
 * A re-ask's answer is bounded (INTERNAL_ANSWER_BYTES: a 400 the proof reports as not proven), and so is the list.
 */
let gw: TestGateway;
let userId: string;
let token: string;
beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false', ANSWER_CACHE_MB: '0' });
  userId = await gw.addUser(0, 'bounds@example.com');
  token = await gw.login('bounds@example.com');
}, 60_000);
afterAll(async () => gw?.close());

const shapeOf = (route: string, query: Record<string, string>) =>
  gw.deps.shapes.shapeOf({ method: 'GET', route, query, question: new URLSearchParams(query).toString() });
const proofOf = (route: string, query: Record<string, string>) => {
  const shape = shapeOf(route, query);
  return prove(shape, equivalentOfShape(shape, gw.deps.mappings, 100), userId, proofDeps(gw.deps, (o) => gw.app.inject(o as any)));
};

describe('a proof', () => {
  it('lists at most PROOF_PATHS differing paths, and says how many more', async () => {
    const project = (await gw.get('/projects?limit=1&fields=id,account', token)).body.data[0];
    const data = Object.fromEntries(Array.from({ length: PROOF_PATHS + 50 }, (_, i) => [`key_${i}`, i]));
    const created = await gw.app.inject({ method: 'POST', url: '/renders', headers: { authorization: `Bearer ${token}` },
      payload: { project: project.id, account: project.account, title: 'many keys', data } });
    expect(created.statusCode).toBe(200);
    const proof = await proofOf('/renders', { fields: 'id,data', sort: '-date_created', limit: '1' });
    expect(proof.result).toBe('differs'); // the render's data is kept by the gateway alone
    expect(proof.differences).toHaveLength(PROOF_PATHS + 1);
    expect(proof.differences.at(-1)).toEqual({ path: '…', kind: expect.stringMatching(/^\d+ more paths$/) });
  });

  it("is not run on an answer larger than a re-ask reads: a 400 to the gateway's own request, the same answer to a client", async () => {
    // ~40 MB of titles over the key's renders
    const mine = [...gw.s.sim.world.renders.values()].filter((r) => gw.s.keys[0]!.teams.some((t) => t.id === r.teamId));
    const each = Math.ceil((INTERNAL_ANSWER_BYTES * 1.25) / mine.length);
    for (const [i, r] of mine.entries()) r.name = `${i} ${'x'.repeat(each)}`;
    try {
      const url = '/renders?limit=-1&fields=id,title';
      const client = await gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      expect(client.statusCode).toBe(200);
      expect(client.body.length).toBeGreaterThan(INTERNAL_ANSWER_BYTES);
      const internal = await gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}`, ...internalHeaders() } });
      expect(internal.statusCode).toBe(400);
      expect(internal.json().errors[0].message).toMatch(/larger than a re-ask by the gateway itself reads \(8 MB\)/);
      const proof = await proofOf('/renders', { fields: 'id,title', limit: '-1' });
      expect(proof).toMatchObject({ result: 'not run', reason: expect.stringMatching(/refuses this question \(400 INVALID_QUERY\)/) });
    } finally {
      for (const [i, r] of mine.entries()) r.name = `render ${i}`;
    }
  });
});
