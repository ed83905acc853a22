import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { SecretBox } from '../../src/store/crypto.js';
import { DuplicateEmailError, UserStore } from '../../src/store/users.js';
import { SessionStore } from '../../src/store/sessions.js';
import { IdConflictError, IdMapStore } from '../../src/store/idmap.js';
import { OverlayStore, RenderDataStore } from '../../src/store/render-extras.js';
import { databases } from '../helpers/databases.js';
import { AGENTS_KEPT, ClientShapeStore } from '../../src/store/client-shapes.js';

const dbs = await databases();
const upgrades = await databases();

/** The indexes of a table, whatever the engine (SQLite's automatic primary-key index included). */
async function indexesOf(db: Db, table: string): Promise<string[]> {
  if (db.dialect === 'sqlite') {
    const r = await sql<{ name: string }>`select name from pragma_index_list(${table})`.execute(db.kysely);
    return r.rows.map((x) => x.name);
  }
  const r = await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = ${table}`.execute(db.kysely);
  return r.rows.map((x) => x.indexname);
}

describe.each(upgrades)('id map upgrade on $name', ({ url }) => {
  it('keeps every pair written before 0005 and leaves one index (uuid, type) to write into', async () => {
    const db = await openDb(url);
    try {
      expect(await migrate(db.kysely, '0004_id_map_by_uuid')).toHaveLength(4);
      expect((await indexesOf(db, 'id_map')).length).toBeGreaterThanOrEqual(3);
      const before = new IdMapStore(db.kysely, () => 1);
      await before.remember([
        { type: 'render', uuid: 'aaaaaaaa-0000-5000-8000-000000000001', v1Id: 'rend_1', source: 'derived' },
        { type: 'project', uuid: 'aaaaaaaa-0000-5000-8000-000000000002', v1Id: 'proj_1', source: 'derived' },
      ]);
      await before.importPairs([{ type: 'account', uuid: 'bbbbbbbb-0000-4000-8000-000000000003', v1Id: 'team_1' }]);
      expect(await migrate(db.kysely, '0005_id_map_one_tree')).toEqual(['0005_id_map_one_tree']);
      const after = new IdMapStore(db.kysely, () => 2);
      expect(await after.all()).toEqual([
        { type: 'account', uuid: 'bbbbbbbb-0000-4000-8000-000000000003', v1Id: 'team_1', source: 'imported' },
        { type: 'project', uuid: 'aaaaaaaa-0000-5000-8000-000000000002', v1Id: 'proj_1', source: 'derived' },
        { type: 'render', uuid: 'aaaaaaaa-0000-5000-8000-000000000001', v1Id: 'rend_1', source: 'derived' },
      ]);
      expect(await after.v1IdFor('project', 'AAAAAAAA-0000-5000-8000-000000000002')).toBe('proj_1');
      expect(await after.v1IdsFor(['aaaaaaaa-0000-5000-8000-000000000001'])).toEqual(new Map([['aaaaaaaa-0000-5000-8000-000000000001', 'rend_1']]));
      expect(await indexesOf(db, 'id_map')).toHaveLength(1);
      // the same uuid may name objects of two types; the key is the pair
      await after.remember([{ type: 'template', uuid: 'aaaaaaaa-0000-5000-8000-000000000001', v1Id: 'tpl_1', source: 'derived' }]);
      expect(await after.v1IdFor('template', 'aaaaaaaa-0000-5000-8000-000000000001')).toBe('tpl_1');
      expect(await after.v1IdFor('render', 'aaaaaaaa-0000-5000-8000-000000000001')).toBe('rend_1');
    } finally {
      await db.close();
    }
  });
});

describe.each(dbs)('store on $name', ({ url }) => {
  let db: Db;
  let users: UserStore;
  let now = 1_700_000_000_000;
  const box = new SecretBox(Buffer.alloc(32, 7));
  beforeAll(async () => {
    db = await openDb(url);
    expect(await migrate(db.kysely)).toEqual(['0001_auth', '0002_translation', '0003_observability', '0004_id_map_by_uuid', '0005_id_map_one_tree', '0006_hardening', '0007_render_index', '0008_index_renders_by_project', '0009_index_head_marks',
      '0010_compare_samples_redacted', '0011_client_shapes', '0012_compare_samples_client', '0013_refresh_rotated_at',
      '0014_index_sync_budget', '0015_index_change_marks', '0016_index_dropped_projects', '0017_deprecations',
      '0018_compare_request_sets', '0019_render_data_sizes', '0020_client_labels', '0021_overlays_by_time', '0022_client_agents',
      '0023_webhook_health']);
    expect(await migrate(db.kysely)).toEqual([]); // idempotent
    users = new UserStore(db.kysely, box, () => now);
  });
  afterAll(async () => db.close());

  it('keeps users with case-insensitive unique emails and the key encrypted at rest', async () => {
    const u = await users.create({ email: 'Ann@Example.com', passwordHash: '$argon2id$x', role: 'r', v1Key: 'sk_' + 'a'.repeat(32), v1UserId: 'user_1' });
    expect(u).toMatchObject({ email: 'Ann@Example.com', v1UserId: 'user_1' });
    expect(JSON.stringify(u)).not.toContain('sk_');
    await expect(users.create({ email: 'ann@example.COM', passwordHash: null, role: 'r', v1Key: 'k', v1UserId: 'u' })).rejects.toBeInstanceOf(DuplicateEmailError);
    expect((await users.byEmail('ANN@example.com'))?.id).toBe(u.id);
    const raw = await db.kysely.selectFrom('users').select('v1_key_enc').where('id', '=', u.id).executeTakeFirstOrThrow();
    expect(raw.v1_key_enc).not.toContain('aaaa');
    expect(await users.v1Key(u.id)).toBe('sk_' + 'a'.repeat(32));
    expect(await users.rebind(u.id, 'sk_' + 'b'.repeat(32), 'user_2')).toBe(true);
    expect(await users.v1Key(u.id)).toBe('sk_' + 'b'.repeat(32));
    expect((await users.byId(u.id))?.v1UserId).toBe('user_2');
  });

  it('keeps legacy uuids on import and updates profile fields with unique emails', async () => {
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    await users.create({ id, email: 'legacy@example.com', passwordHash: null, role: 'r', v1Key: 'k', v1UserId: 'user_9' });
    expect((await users.byId(id))?.email).toBe('legacy@example.com');
    await expect(users.update(id, { email: 'ANN@example.com' })).rejects.toBeInstanceOf(DuplicateEmailError);
    expect(await users.update(id, { firstName: 'Leg', email: 'new@example.com' })).toMatchObject({ firstName: 'Leg', email: 'new@example.com' });
    expect((await users.list()).map((u) => u.email)).toContain('new@example.com');
    expect(await users.remove(id)).toBe(true);
    expect(await users.byId(id)).toBeUndefined();
  });

  it('stores static tokens hashed, shows them once, and revokes them', async () => {
    const u = (await users.byEmail('ann@example.com'))!;
    const { id, token } = await users.createStaticToken(u.id, 'ci');
    const raw = await db.kysely.selectFrom('static_tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(raw.token_hash).not.toBe(token);
    expect((await users.userForStaticToken(token))?.user.id).toBe(u.id);
    expect(await users.revokeStaticToken(id)).toBe(true);
    expect(await users.userForStaticToken(token)).toBeUndefined();
  });

  it('rotates refresh tokens and revokes the session when a rotated token comes back', async () => {
    const u = (await users.byEmail('ann@example.com'))!;
    const sessions = new SessionStore(db.kysely, 60_000, () => now);
    const { refreshToken: t1 } = await sessions.create(u.id);
    const r2 = await sessions.rotate(t1);
    expect(r2.ok).toBe(true);
    const t2 = (r2 as { refreshToken: string }).refreshToken;
    expect(await sessions.rotate(t1)).toEqual({ ok: false, reason: 'reused' });
    expect(await sessions.rotate(t2)).toEqual({ ok: false, reason: 'revoked' }); // the whole session is gone
    const { refreshToken: t3 } = await sessions.create(u.id);
    now += 61_000;
    expect(await sessions.rotate(t3)).toEqual({ ok: false, reason: 'expired' });
    expect(await sessions.rotate('nope')).toEqual({ ok: false, reason: 'unknown' });
    const { refreshToken: t4 } = await sessions.create(u.id);
    await sessions.logout(t4);
    expect(await sessions.rotate(t4)).toEqual({ ok: false, reason: 'revoked' });
  });

  it('lets exactly one of two concurrent refreshes win', async () => {
    const u = (await users.byEmail('ann@example.com'))!;
    const sessions = new SessionStore(db.kysely, 60_000, () => now);
    const { refreshToken } = await sessions.create(u.id);
    const results = await Promise.all([sessions.rotate(refreshToken), sessions.rotate(refreshToken)]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });

  it('maps ids: derived pairs remembered, imported pairs win, conflicts refused', async () => {
    const ids = new IdMapStore(db.kysely, () => now);
    await ids.remember([{ type: 'render', uuid: 'aaaaaaaa-0000-5000-8000-000000000001', v1Id: 'rend_1', source: 'derived' }]);
    await ids.remember([{ type: 'render', uuid: 'aaaaaaaa-0000-5000-8000-000000000001', v1Id: 'rend_1', source: 'derived' }]);
    expect(await ids.v1IdFor('render', 'AAAAAAAA-0000-5000-8000-000000000001')).toBe('rend_1');
    expect(await ids.importPairs([{ type: 'render', uuid: 'bbbbbbbb-0000-4000-8000-000000000001', v1Id: 'rend_1' }])).toEqual({ imported: 1, unchanged: 0 });
    expect((await ids.imported()).map((p) => p.uuid)).toContain('bbbbbbbb-0000-4000-8000-000000000001');
    await expect(ids.importPairs([{ type: 'render', uuid: 'bbbbbbbb-0000-4000-8000-000000000001', v1Id: 'rend_2' }])).rejects.toBeInstanceOf(IdConflictError);
    expect((await ids.all()).length).toBe(2);
    expect(await ids.v1IdsFor(['BBBBBBBB-0000-4000-8000-000000000001', 'aaaaaaaa-0000-5000-8000-000000000001', 'cccccccc-0000-4000-8000-000000000001']))
      .toEqual(new Map([['bbbbbbbb-0000-4000-8000-000000000001', 'rend_1'], ['aaaaaaaa-0000-5000-8000-000000000001', 'rend_1']]));
  });

  it("counts a client's User-Agents across instances' flushes and keeps its most recently seen (issue 39)", async () => {
    const store = new ClientShapeStore(db.kysely);
    const client = 'user:agents~other';
    await store.applyAgents([{ client, agent: 'a/1', count: 2, last: 10 }, { client, agent: 'b/1', count: 1, last: 11 }]);
    await store.applyAgents([{ client, agent: 'a/1', count: 3, last: 9 }]);
    expect(await store.agents(client)).toEqual([{ agent: 'a/1', count: 5 }, { agent: 'b/1', count: 1 }]);
    await store.applyAgents(Array.from({ length: AGENTS_KEPT }, (_, i) => ({ client, agent: `n/${i}`, count: 1, last: 100 + i })));
    expect((await store.agents(client)).map((a) => a.agent).sort()).toEqual(Array.from({ length: AGENTS_KEPT }, (_, i) => `n/${i}`).sort());
    await store.prune(200, 100, []);
    expect(await store.agents(client)).toEqual([]);
  });

  it('keeps render data and overlays', async () => {
    const data = new RenderDataStore(db.kysely, () => now);
    await data.put('rend_1', { name: 'Ünï', n: 1 }, 't', null);
    expect(await data.many(['rend_1', 'rend_x'])).toEqual(new Map([['rend_1', { name: 'Ünï', n: 1 }]]));
    const overlays = new OverlayStore(db.kysely, () => now);
    await overlays.set('render', 'rend_1', { title: 'A' }, null);
    await overlays.set('render', 'rend_1', { title: 'B' }, null);
    expect((await overlays.ofType('render')).get('rend_1')).toEqual({ title: 'B' });
  });
});

describe('SQLite durability (SQLITE_SYNCHRONOUS)', () => {
  it('waits for the disk at every commit by default (full), at checkpoints only with normal, in WAL mode either way', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { rmSync } = await import('node:fs');
    const dir = mkdtempSync(join(tmpdir(), 'gw-sync-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    for (const [o, expected] of [[{}, 2], [{ sqliteSynchronous: 'full' as const }, 2], [{ sqliteSynchronous: 'normal' as const }, 1]] as const) {
      const db = await openDb(join(dir, `store-${expected}-${Object.keys(o).length}.db`), o);
      try {
        const mode = await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(db.kysely);
        expect(mode.rows[0]?.synchronous).toBe(expected);
        const journal = await sql<{ journal_mode: string }>`PRAGMA journal_mode`.execute(db.kysely);
        expect(journal.rows[0]?.journal_mode).toBe('wal');
      } finally {
        await db.close();
      }
    }
  });
});

const counted = await databases();
describe.each(counted)('the replica\'s team counts on $name', ({ url }) => {
  it('counts each team not in memory (renders, projects, renders not yet final), and leaves the held ones to memory', async () => {
    const { ReplicaStore } = await import('../../src/store/replica-store.js');
    const db = await openDb(url);
    try {
      await migrate(db.kysely);
      const ix = new ReplicaStore(db.kysely, () => 1);
      const team = (id: string) => ({ id, name: id, account_id: `acct_${id}`, role: 'admin' as const, created_at: 1 });
      const render = (id: string, teamId: string, project: string, status: 'queued' | 'complete') => ({
        id, name: id, status, type: 'local' as const, project: { id: project, team: teamId }, created_by: null, created_at: 1_700_000_000, updated_at: null,
      });
      for (const t of ['team_c1', 'team_c2']) {
        await ix.putTeam(team(t), []);
        await ix.putProjects(t, [{ id: `${t}_p1`, name: 'p1', team: { id: t, name: t }, created_by: null, created_at: 1, updated_at: null, thumbnail_url: null },
          { id: `${t}_p2`, name: 'p2', team: { id: t, name: t }, created_by: null, created_at: 1, updated_at: null, thumbnail_url: null }] as never);
        await ix.putRenders(t, Array.from({ length: 2_345 }, (_, i) => render(`${t}_r${i}`, t, `${t}_p${1 + (i % 2)}`, i % 5 === 0 ? 'queued' : 'complete')) as never);
      }
      const all = await ix.teams((id) => id === 'team_c2');
      expect(all.find((t) => t.team.id === 'team_c1')).toMatchObject({ renders: 2_345, projects: 2, moving: Math.ceil(2_345 / 5) });
      expect(all.find((t) => t.team.id === 'team_c2')).toMatchObject({ renders: 0, projects: 0, moving: 0 });
      expect((await ix.teams()).find((t) => t.team.id === 'team_c2')).toMatchObject({ renders: 2_345, projects: 2, moving: Math.ceil(2_345 / 5) });
    } finally {
      await db.close();
    }
  });
});
