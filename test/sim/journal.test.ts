import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorldJournalError } from '../../src/sim/journal.js';
import { createSimulator } from '../../src/sim/server.js';
import { call } from '../helpers/sim.js';

/** A simulator world kept across restarts (the demo's): the same world again, and new ids that never repeat old ones. */
describe('simulator world journal', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sim-journal-'));

  it('a restarted simulator is the same world: its writes are back, and the ids it hands out next are new', async () => {
    const file = join(dir, 'world.jsonl');
    const first = createSimulator({ seed: 3, scale: 'tiny', clock: 'manual', journal: file });
    expect(first.journal?.created).toBe(true);
    const url = await first.listen(0);
    const owner = first.world.listKeys()[0]!;
    const project = [...first.world.projects.values()].find((p) => p.teamId === owner.teams[0]!.id)!;
    const made = await call(url, '/v1/renders', { method: 'POST', key: owner.api_key, body: { project_id: project.id, name: 'made before the restart' } });
    expect(made.status).toBe(201);
    expect((await call(url, '/_sim/clock', { method: 'POST', body: { advance_ms: 60_000 } })).status).toBe(200);
    const added = first.world.addProject(owner.teams[0]!.id, 'From the dashboard');
    const rotated = (await call(url, '/_sim/keys/rotate', { method: 'POST', body: { user_id: owner.user_id } })).body.api_key as string;
    expect((await call(url, '/_sim/credits', { method: 'POST', body: { team_id: owner.teams[0]!.id, credits: 7 } })).status).toBe(200);
    const before = { render: (await call(url, `/v1/renders/${made.body.id}`, { key: rotated })).body, world: (await call(url, '/_sim/world')).body };
    expect(before.render.status).toBe('complete');
    const firstIds = new Set(first.world.renders.keys());
    await first.close();

    const second = createSimulator({ seed: 3, scale: 'tiny', clock: 'manual', journal: file });
    expect(second.journal?.created).toBe(false);
    const url2 = await second.listen(0);
    expect((await call(url2, '/_sim/world')).body).toEqual(before.world);
    expect(second.identity.world).toBe(first.identity.world);
    // the render made before the restart, as it was (status moved by the replayed clock), the project, the keys, the credits
    // (its signed output URLs are signed again on each read: compared without their query)
    const unsigned = (r: any) => JSON.parse(JSON.stringify(r).replace(/\?expires=[^"]*/g, ''));
    expect(unsigned((await call(url2, `/v1/renders/${made.body.id}`, { key: rotated })).body)).toEqual(unsigned(before.render));
    expect(second.world.projects.get(added.id)?.name).toBe('From the dashboard');
    expect((await call(url2, '/v1/me', { key: owner.api_key })).status).toBe(401);
    expect(second.world.teams.get(owner.teams[0]!.id)?.credits).toBe(7); // set after the render completed
    // a render made after the restart gets an id no render of the first run had
    const after = await call(url2, '/v1/renders', { method: 'POST', key: rotated, body: { project_id: project.id, name: 'made after the restart' } });
    expect(after.status).toBe(201);
    expect(firstIds.has(after.body.id)).toBe(false);
    await second.close();
    // and a third start still has both
    const third = createSimulator({ seed: 3, scale: 'tiny', clock: 'manual', journal: file });
    expect(third.world.renders.get(made.body.id)?.name).toBe('made before the restart');
    expect(third.world.renders.get(after.body.id)?.name).toBe('made after the restart');
    await third.close();
  });

  it('two simulators of one seed without a journal are two worlds (two identities)', async () => {
    const a = createSimulator({ seed: 1 });
    const b = createSimulator({ seed: 1 });
    expect(a.identity.seed).toBe(b.identity.seed);
    expect(a.identity.world).not.toBe(b.identity.world);
    await a.close();
    await b.close();
  });

  it('refuses a journal of another seed or scale, naming both', () => {
    const file = join(dir, 'seeded.jsonl');
    createSimulator({ seed: 5, scale: 'tiny', journal: file }).close();
    const e = (() => { try { createSimulator({ seed: 6, scale: 'tiny', journal: file }); } catch (x) { return x; } return undefined; })();
    expect(e).toBeInstanceOf(WorldJournalError);
    expect((e as Error).message).toContain('SIM_SEED=5 SIM_SCALE=tiny, not SIM_SEED=6 SIM_SCALE=tiny');
    expect(() => createSimulator({ seed: 5, scale: 'small', journal: file })).toThrow(WorldJournalError);
  });

  it('ignores a write cut short by a crash (a partial last line), and refuses a damaged journal', () => {
    const file = join(dir, 'cut.jsonl');
    const s = createSimulator({ seed: 2, scale: 'tiny', journal: file });
    const owner = s.world.listKeys()[0]!;
    s.world.addProject(owner.teams[0]!.id, 'Kept');
    void s.close();
    appendFileSync(file, '{"op":"project","at":1,"te');
    const again = createSimulator({ seed: 2, scale: 'tiny', journal: file });
    expect([...again.world.projects.values()].filter((p) => p.name === 'Kept')).toHaveLength(1);
    void again.close();
    const lines = readFileSync(file, 'utf8').split('\n');
    const damaged = join(dir, 'damaged.jsonl');
    appendFileSync(damaged, `${lines[0]}\n{"op":"render","at":1,"person":"user_nobody","body":{}}\n`);
    expect(() => createSimulator({ seed: 2, scale: 'tiny', journal: damaged })).toThrow(/cannot be made again/);
  });
});
