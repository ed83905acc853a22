import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { databases } from '../helpers/databases.js';

/**
 * What the store itself guarantees, whatever the code writing to it: required columns, keys, uniqueness, defaults,
 * cascades and the indexes the hot queries rely on. Every table's required columns are listed here by hand.
 */
const [{ url }] = (await databases()) as unknown as [{ url: string }];
const opened: Db[] = [];
let db: Db;
/** A fresh store, migrated inside the test itself (so the migrations count as run by it), with one user and session. */
async function fresh(): Promise<void> {
  db = await openDb(url.replace(/store\.db$/, `schema-${opened.length}.db`));
  opened.push(db);
  await migrate(db.kysely);
  await db.kysely.insertInto('users').values({ id: 'owner', email: 'o@x.io', email_lower: 'o@x.io', password_hash: null, first_name: null, last_name: null,
    role: 'r', v1_key_enc: 'v1:x', v1_user_id: 'v', status: 'active', created_at: 1, updated_at: null }).execute();
  await db.kysely.insertInto('sessions').values({ id: 'sess', user_id: 'owner', created_at: 1, revoked_at: null, revoke_reason: null }).execute();
}
afterAll(async () => { for (const d of opened) await d.close(); });

let n = 0;
const u = () => `v${++n}`;
/**
 * A valid row of each table (fresh keys on every call), and the columns that must not be null. A single-column primary
 * key is left out: SQLite lets NULL into one (its documented legacy quirk); keys are checked for uniqueness below.
 */
const tables: Record<string, { row: () => Record<string, unknown>; required: string[]; nullable: string[] }> = {
  users: {
    row: () => { const id = u(); return { id, email: `${id}@x.io`, email_lower: `${id}@x.io`, password_hash: 'h', first_name: 'f', last_name: 'l', role: 'r', v1_key_enc: 'e', v1_user_id: 'v', status: 'active', created_at: 1, updated_at: 2 }; },
    required: ['email', 'email_lower', 'role', 'v1_key_enc', 'v1_user_id', 'status', 'created_at'],
    nullable: ['password_hash', 'first_name', 'last_name', 'updated_at'],
  },
  static_tokens: {
    row: () => ({ id: u(), user_id: 'owner', token_hash: u(), name: 'n', created_at: 1, revoked_at: 2, last_used_at: 3 }),
    required: ['user_id', 'token_hash', 'name', 'created_at'],
    nullable: ['revoked_at', 'last_used_at'],
  },
  sessions: {
    row: () => ({ id: u(), user_id: 'owner', created_at: 1, revoked_at: 2, revoke_reason: 'x' }),
    required: ['user_id', 'created_at'],
    nullable: ['revoked_at', 'revoke_reason'],
  },
  refresh_tokens: {
    row: () => ({ token_hash: u(), session_id: 'sess', status: 'active', expires_at: 1, created_at: 1 }),
    required: ['session_id', 'status', 'expires_at', 'created_at'],
    nullable: [],
  },
  id_map: {
    row: () => ({ type: 'render', uuid: u(), v1_id: 'x', source: 'derived', created_at: 1 }),
    required: ['type', 'uuid', 'v1_id', 'source', 'created_at'],
    nullable: [],
  },
  render_data: {
    row: () => ({ v1_id: u(), data: '{}', title: 't', created_by: 'c', created_at: 1 }),
    required: ['data', 'created_at'],
    nullable: ['title', 'created_by'],
  },
  overlays: {
    row: () => ({ type: 't', v1_id: u(), field: 'f', value: '1', updated_by: 'u', updated_at: 1 }),
    required: ['type', 'v1_id', 'field', 'value', 'updated_at'],
    nullable: ['updated_by'],
  },
  idempotency: {
    row: () => ({ user_id: 'u', key: u(), request_hash: 'h', state: 'pending', status: 200, response: '{}', created_at: 1, lease_until: 1, started_at: 1, project_v1: 'p', render_name: 'n', render_v1_id: 'r' }),
    required: ['user_id', 'key', 'request_hash', 'state', 'created_at'],
    nullable: ['status', 'response', 'lease_until', 'started_at', 'project_v1', 'render_name', 'render_v1_id'],
  },
  usage: {
    row: () => ({ route: u(), principal: 'p', principal_kind: 'k', count: 1, first_seen: 1, last_seen: 1 }),
    required: ['route', 'principal', 'principal_kind', 'count', 'first_seen', 'last_seen'],
    nullable: [],
  },
  compare_routes: {
    row: () => ({ route: u(), total: 1, differing: 0, legacy_ms_total: 1.5, translated_ms_total: 2.5 }),
    required: ['total', 'differing', 'legacy_ms_total', 'translated_ms_total'],
    nullable: [],
  },
  compare_fields: {
    row: () => ({ route: u(), path: 'p', kind: 'k', count: 1, noise: 0 }),
    required: ['route', 'path', 'kind', 'count', 'noise'],
    nullable: [],
  },
  compare_samples: {
    row: () => ({ id: u(), route: 'r', path: 'p', kind: 'k', legacy: 'l', translated: 't', request: 'q', created_at: 1, client: 'user:u~curl' }),
    required: ['route', 'path', 'kind', 'request', 'created_at'],
    nullable: ['legacy', 'translated', 'client'],
  },
  client_shapes: {
    row: () => ({ client: u(), shape_key: 'k', user_id: 'u', shape: '{}', count: 1, errors: 0, ms_total: 1, ms_max: 1, calls: '{}', first_seen: 1,
      last_seen: 2, compared: 0, differing: 0 }),
    required: ['shape_key', 'user_id', 'shape', 'count', 'errors', 'ms_total', 'ms_max', 'calls', 'first_seen', 'last_seen', 'compared', 'differing'],
    nullable: [],
  },
  client_agents: {
    row: () => ({ client: u(), agent: 'a/1', count: 1, last_seen: 1 }),
    required: ['agent', 'count', 'last_seen'],
    nullable: [],
  },
  gateway_meta: {
    row: () => ({ key: u(), value: 'v' }),
    required: ['value'],
    nullable: [],
  },
  login_limits: {
    row: () => ({ key: u(), window_start: 1, count: 1 }),
    required: ['window_start', 'count'],
    nullable: [],
  },
  webhook_events: {
    row: () => ({ id: u(), team: 't', received_at: 1 }),
    required: ['team', 'received_at'],
    nullable: [],
  },
  render_versions: {
    row: () => ({ v1_id: u(), updated_at: 1, rank: 1 }),
    required: ['updated_at', 'rank'],
    nullable: [],
  },
  index_teams: {
    row: () => ({ team_id: u(), team: '{}', members: '[]', state: 'ready', backfilled_at: 1, synced_at: 1, webhook_at: 1, lease_holder: 'h', lease_until: 1 }),
    required: ['team', 'members', 'state'],
    nullable: ['backfilled_at', 'synced_at', 'webhook_at', 'lease_holder', 'lease_until'],
  },
  index_projects: {
    row: () => ({ project_id: u(), team_id: 't', project: '{}', templates: '[]', backfilled: 1, head_mark: 1.5 }),
    required: ['team_id', 'project', 'backfilled'],
    nullable: ['templates', 'head_mark'],
  },
  index_renders: {
    row: () => ({ render_id: u(), team_id: 't', project_id: 'p', updated_at: 1, rank: 1, seen_at: 1, render: '{}' }),
    required: ['team_id', 'project_id', 'updated_at', 'rank', 'seen_at', 'render'],
    nullable: [],
  },
};

const insert = (table: string, row: Record<string, unknown>) => db.kysely.insertInto(table as never).values(row as never).execute();

describe.each(Object.entries(tables))('table %s', (table, spec) => {
  it('accepts a full row and nulls in its optional columns, and refuses a null in each required one', async () => {
    await fresh();
    await insert(table, spec.row());
    await insert(table, { ...spec.row(), ...Object.fromEntries(spec.nullable.map((c) => [c, null])) });
    for (const column of spec.required) {
      await expect(insert(table, { ...spec.row(), [column]: null }), column).rejects.toThrow(/NOT NULL/i);
    }
  });
});

describe('keys, uniqueness, defaults and cascades', () => {
  const dup = async (table: string, row: Record<string, unknown>) => {
    await insert(table, row);
    await expect(insert(table, row)).rejects.toThrow(/UNIQUE|PRIMARY/i);
  };

  it('refuses a second row under the same key', async () => {
    await fresh();
    for (const [table, spec] of Object.entries(tables)) {
      if (table === 'users') continue;
      await dup(table, spec.row());
    }
    // users: by id and by lower-cased email
    const a = tables.users!.row();
    await insert('users', a);
    await expect(insert('users', { ...tables.users!.row(), id: a.id })).rejects.toThrow(/UNIQUE|PRIMARY/i);
    await expect(insert('users', { ...tables.users!.row(), email_lower: a.email_lower })).rejects.toThrow(/UNIQUE/i);
    await expect(insert('static_tokens', { ...tables.static_tokens!.row(), token_hash: 'same-hash' })).resolves.toBeDefined();
    await expect(insert('static_tokens', { ...tables.static_tokens!.row(), token_hash: 'same-hash' })).rejects.toThrow(/UNIQUE/i);
  });

  it('composite keys: rows differing in one key column are distinct', async () => {
    await fresh();
    const cases: [string, Record<string, unknown>, string[]][] = [
      ['overlays', tables.overlays!.row(), ['type', 'v1_id', 'field']],
      ['idempotency', tables.idempotency!.row(), ['user_id', 'key']],
      ['usage', tables.usage!.row(), ['route', 'principal']],
      ['compare_fields', tables.compare_fields!.row(), ['route', 'path', 'kind']],
      ['id_map', tables.id_map!.row(), ['uuid', 'type']],
      ['client_shapes', tables.client_shapes!.row(), ['client', 'shape_key']],
      ['client_agents', tables.client_agents!.row(), ['client', 'agent']],
    ];
    for (const [table, row, key] of cases) {
      await insert(table, row);
      for (const c of key) await insert(table, { ...row, [c]: `${String(row[c])}-other` });
      // a non-key column does not make a row distinct
      const nonKey = Object.keys(row).find((c) => !key.includes(c))!;
      await expect(insert(table, { ...row, [nonKey]: typeof row[nonKey] === 'number' ? 99 : 'changed' })).rejects.toThrow(/UNIQUE|PRIMARY/i);
    }
  });

  it('a user\'s status defaults to active; a project\'s checkpoint to not backfilled', async () => {
    await fresh();
    const { status: _s, ...row } = tables.users!.row();
    await insert('users', row);
    expect((await db.kysely.selectFrom('users').select('status').where('id', '=', row.id as string).executeTakeFirstOrThrow()).status).toBe('active');
    const { backfilled: _b, ...p } = tables.index_projects!.row();
    await insert('index_projects', p);
    expect(Number((await db.kysely.selectFrom('index_projects').select('backfilled').where('project_id', '=', p.project_id as string).executeTakeFirstOrThrow()).backfilled)).toBe(0);
  });

  it('tokens and sessions belong to an existing user and go with it', async () => {
    await fresh();
    await expect(insert('static_tokens', { ...tables.static_tokens!.row(), user_id: 'nobody' })).rejects.toThrow(/FOREIGN KEY/i);
    await expect(insert('sessions', { ...tables.sessions!.row(), user_id: 'nobody' })).rejects.toThrow(/FOREIGN KEY/i);
    await expect(insert('refresh_tokens', { ...tables.refresh_tokens!.row(), session_id: 'nobody' })).rejects.toThrow(/FOREIGN KEY/i);
    const user = tables.users!.row();
    await insert('users', user);
    const st: Record<string, unknown> = { ...tables.static_tokens!.row(), user_id: user.id };
    const se: Record<string, unknown> = { ...tables.sessions!.row(), user_id: user.id };
    await insert('static_tokens', st);
    await insert('sessions', se);
    const rt: Record<string, unknown> = { ...tables.refresh_tokens!.row(), session_id: se.id };
    await insert('refresh_tokens', rt);
    await db.kysely.deleteFrom('users').where('id', '=', user.id as string).execute();
    expect(await db.kysely.selectFrom('static_tokens').select('id').where('id', '=', st.id as string).execute()).toEqual([]);
    expect(await db.kysely.selectFrom('sessions').select('id').where('id', '=', se.id as string).execute()).toEqual([]);
    expect(await db.kysely.selectFrom('refresh_tokens').select('token_hash').where('token_hash', '=', rt.token_hash as string).execute()).toEqual([]);
  });

  it('has the indexes the hot queries use, and id_map is one B-tree without rowid', async () => {
    await fresh();
    const names = (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and name not like 'sqlite_autoindex%'`.execute(db.kysely)).rows.map((r) => r.name).sort();
    expect(names).toEqual(['client_shapes_seen', 'compare_samples_field', 'index_dropped_projects_changes', 'index_projects_team', 'index_renders_changes',
      'index_renders_project', 'overlays_by_time', 'refresh_tokens_session', 'webhook_events_received']);
    const cols = async (index: string) => (await sql<{ name: string }>`select name from pragma_index_info(${index})`.execute(db.kysely)).rows.map((r) => r.name);
    expect(await cols('compare_samples_field')).toEqual(['route', 'path', 'kind']);
    expect(await cols('client_shapes_seen')).toEqual(['last_seen']);
    expect(await cols('refresh_tokens_session')).toEqual(['session_id']);
    expect(await cols('webhook_events_received')).toEqual(['received_at']);
    expect(await cols('index_projects_team')).toEqual(['team_id']);
    expect(await cols('index_renders_changes')).toEqual(['team_id', 'change_seq']); // also every look-up by team
    expect(await cols('index_renders_project')).toEqual(['project_id']);
    expect(await cols('overlays_by_time')).toEqual(['type', 'updated_at']); // (a resync's overlays written since)
    const idMap = (await sql<{ sql: string }>`select sql from sqlite_master where name = 'id_map'`.execute(db.kysely)).rows[0]!.sql;
    expect(idMap).toMatch(/without rowid\s*$/i);
  });

  it('migrate answers only the migrations it applied, and fails loudly on an unknown target', async () => {
    db = await openDb(url.replace(/store\.db$/, 'schema-steps.db'));
    opened.push(db);
    expect(await migrate(db.kysely, '0002_translation')).toEqual(['0001_auth', '0002_translation']);
    expect(await migrate(db.kysely, '0002_translation')).toEqual([]);
    const rest = await migrate(db.kysely);
    expect(rest[0]).toBe('0003_observability');
    expect(rest).not.toContain('0002_translation');
    expect(await migrate(db.kysely)).toEqual([]);
    await expect(migrate(db.kysely, 'no_such_migration')).rejects.toThrow(Error);
  });
});
