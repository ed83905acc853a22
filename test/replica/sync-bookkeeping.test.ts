import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { databases } from '../helpers/databases.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * Issue 43, part 3: a sync's own bookkeeping. A sync that finds nothing writes three statements to the store, whatever
 * the store — the team's lease taken with the sync's start, the calls reserved for the team and the key in one upsert,
 * the lease given back with the sync mark — and announces the team once (a NOTIFY on PostgreSQL, local on SQLite).
 * Counted at the query executor every store statement goes through, on an SQLite file and on PostgreSQL.
 */
describe.each(await databases())('a sync that finds nothing, on $name', ({ url }) => {
  let sim: RunningSim;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = await startSim();
    // no heartbeat within the test (the receivers' beat and a lease's renewal would be writes of their own)
    gw = await startGateway({ DATABASE_URL: url, INDEX_LEASE_HEARTBEAT_MS: '600000', INDEX_RECONCILE_MS: '3600000' }, {}, { sim, simClock: true });
    await gw.addUser(0, 'books@example.com');
    await gw.deps.replica!.syncNow(sim.keys[0]!.teams.map((t) => t.id));
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.sim.close();
  });

  it('writes the lease with its start, one reservation, the release with the mark — and announces the team once', async () => {
    const replica = gw.deps.replica!;
    const team = sim.keys[0]!.teams[0]!.id;
    const t = (await replica.load(team))!;
    // a new minute of budget, 1 s into it (so the sync below, 6 s later, falls in the same minute — no sweep of old
    // minutes, once a minute an instance): the first sync in it finds what moved meanwhile
    sim.sim.clock.advance(60_000 + 61_000 - (sim.sim.clock.now() % 60_000));
    await replica.syncTeam(t, false);
    sim.sim.clock.advance(6_000); // past the team's bound (INDEX_MAX_STALENESS_MS): nothing changed since
    const synced = t.syncedAt;
    const executor = gw.deps.db.kysely.getExecutor();
    const run = vi.spyOn(executor, 'executeQuery');
    const heard: string[] = [];
    let listening = true;
    for (const topic of ['index_team', 'index_renders']) gw.deps.bus.on(topic, (key) => listening && key.includes(team) && heard.push(`${topic} ${key}`));
    const calls = [...sim.sim.stats.values()].reduce((a, b) => a + b, 0);
    await replica.syncTeam(t, false);
    // this team's statements (the scheduler may sync the other teams meanwhile: the clock moved for them too)
    const ours = run.mock.calls.filter((c) => c[0].parameters.some((p) => typeof p === 'string' && p.includes(team)));
    const statements = ours.map((c) => c[0].sql.replace(/\s+/g, ' ').trim());
    run.mockRestore();
    listening = false;
    expect([...sim.sim.stats.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(calls); // it did walk v1
    expect(t.syncedAt).toBeGreaterThan(synced ?? 0);
    const writes = statements.filter((s) => /^(insert|update|delete)\b/i.test(s));
    expect(writes, statements.join('\n')).toHaveLength(3);
    expect(writes[0]).toMatch(/^update "?index_teams"? set "?lease_holder"?.*"?sync_started_at"?/i);
    expect(writes[1]).toMatch(/^insert into index_sync_calls .* values \(.+\), \(.+\) on conflict/i);
    expect(writes[2]).toMatch(/^update "?index_teams"? set "?lease_holder"? = .*"?synced_at"? = case/i);
    expect(writes.join(' ')).not.toMatch(/\b1\d{12}\b/); // every value a parameter (one prepared statement reused)
    expect(heard).toEqual([`index_team ${replica.holder} ${team}`]);
    // the store holds what the release wrote: the sync mark, the lease free for any instance
    const row = await replica.store.team(team);
    expect(row!.syncedAt).toBe(t.syncedAt);
    expect(await replica.store.lease(team, 'another-instance', 1_000)).toBe(true);
    await replica.store.release(team, 'another-instance');
  });
});
