import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMigrationReport } from '../../src/admin/migration-report.js';
import type { ShapeReport } from '../../src/migrate/report.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 39, the eleventh held-out check: two gateway users bound to one v1 person. That person's records carry the first
 * bound user's uuid in the legacy answers, so the second one's "my renders" (`user_created _eq $CURRENT_USER`) finds
 * none through the gateway, while v1 — the snippets give the key's person's id — has every one. The proof drew the
 * creators it found in the records (the first user's uuid) and said "equal"; it now also asks with the client's own uuid
 * where it is not its records' own, and says "differs". For the first user, the same shape stays "equal".
 */
let gw: TestGateway;
const tokens: Record<string, string> = {};
let byUser = new Map<string, Map<string, ShapeReport>>();
let first = '';
let second = '';
const KEY = 'GET /renders fields=id,title filter=user_created _eq ? sort=title paging=all';
const URL = '/renders?fields=id,title&filter[user_created][_eq]=$CURRENT_USER&sort=title&limit=-1';

const ask = async (who: string, url: string) => {
  const res = await gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${tokens[who]}`, 'user-agent': 'python-urllib/3.12' } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { id: string }[];
};

beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'tiny' });
  first = await gw.addUser(0, 'first@example.com', 'first-password-123');
  second = await gw.addUser(0, 'second@example.com', 'second-password-123');
  tokens.first = await gw.login('first@example.com', 'first-password-123');
  tokens.second = await gw.login('second@example.com', 'second-password-123');
  await gw.deps.shapes.flush();
}, 120_000);
afterAll(async () => { await gw?.close(); });

describe('a v1 person bound to two gateway users', () => {
  it('the first bound user\'s "my renders" holds the person\'s renders, the second\'s none (the gateway, as documented)', async () => {
    expect((await ask('first', URL)).length).toBeGreaterThan(0);
    expect(await ask('second', URL)).toEqual([]);
    await gw.deps.shapes.flush();
    const inject = (o: { method: string; url: string; headers: Record<string, string> }) => gw.app.inject(o as never);
    const report = await buildMigrationReport(gw.deps, inject, { prove: true });
    byUser = new Map(report.clients.map((c) => [c.principal, new Map(c.shapes.map((s) => [s.key, s]))]));
  }, 300_000);

  it('the proof says "differs" for the second user (its own uuid asked too), "equal" for the first', () => {
    const of = (user: string) => [...byUser].find(([p]) => p.includes(user))?.[1].get(KEY);
    const mine = of(second);
    expect(mine, [...byUser.keys()].join(' | ')).toBeDefined();
    expect(mine!.proof?.result, JSON.stringify(mine!.proof)).toBe('differs');
    expect(mine!.proof?.reason).toMatch(/draw 3 of 3/);
    const theirs = of(first);
    expect(theirs!.proof?.result, JSON.stringify(theirs!.proof)).toBe('equal');
    expect(theirs!.proof?.draws).toBe(2);
  });
});
