import { SqliteAdapter, sql, type Kysely, type Migration } from 'kysely';
import { redactText0010, redactValue0010 } from './redaction-0010.js';

/** The store's first migrations (0001–0010): users and sessions, translation, observability, the id map, the replica. Released: never edit. */
export const FIRST_MIGRATIONS: Record<string, Migration> = {
  '0001_auth': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('users')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('email', 'varchar(320)', (c) => c.notNull())
        .addColumn('email_lower', 'varchar(320)', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text')
        .addColumn('first_name', 'varchar(255)')
        .addColumn('last_name', 'varchar(255)')
        .addColumn('role', 'varchar(36)', (c) => c.notNull())
        .addColumn('v1_key_enc', 'text', (c) => c.notNull())
        .addColumn('v1_user_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull().defaultTo('active'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint')
        .execute();
      await db.schema.createTable('static_tokens')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('user_id', 'varchar(36)', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('name', 'varchar(255)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema.createTable('sessions')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('user_id', 'varchar(36)', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .addColumn('revoke_reason', 'varchar(64)')
        .execute();
      await db.schema.createTable('refresh_tokens')
        .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('session_id', 'varchar(36)', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('refresh_tokens_session').on('refresh_tokens').column('session_id').execute();
    },
  },
  '0002_translation': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('id_map')
        .addColumn('type', 'varchar(16)', (c) => c.notNull())
        .addColumn('uuid', 'varchar(36)', (c) => c.notNull())
        .addColumn('v1_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('source', 'varchar(16)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('id_map_pk', ['type', 'uuid'])
        .execute();
      await db.schema.createIndex('id_map_v1').on('id_map').columns(['type', 'v1_id']).execute();
      await db.schema.createTable('render_data')
        .addColumn('v1_id', 'varchar(128)', (c) => c.primaryKey())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('title', 'text')
        .addColumn('created_by', 'varchar(36)')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createTable('overlays')
        .addColumn('type', 'varchar(16)', (c) => c.notNull())
        .addColumn('v1_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('field', 'varchar(64)', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('updated_by', 'varchar(36)')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('overlays_pk', ['type', 'v1_id', 'field'])
        .execute();
      await db.schema.createTable('idempotency')
        .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('key', 'varchar(255)', (c) => c.notNull())
        .addColumn('request_hash', 'varchar(64)', (c) => c.notNull())
        .addColumn('state', 'varchar(16)', (c) => c.notNull())
        .addColumn('status', 'integer')
        .addColumn('response', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_pk', ['user_id', 'key'])
        .execute();
    },
  },
  '0003_observability': {
    async up(db: Kysely<any>) {
      await db.schema.createTable('usage')
        .addColumn('route', 'varchar(255)', (c) => c.notNull())
        .addColumn('principal', 'varchar(64)', (c) => c.notNull())
        .addColumn('principal_kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('count', 'bigint', (c) => c.notNull())
        .addColumn('first_seen', 'bigint', (c) => c.notNull())
        .addColumn('last_seen', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('usage_pk', ['route', 'principal'])
        .execute();
      await db.schema.createTable('compare_routes')
        .addColumn('route', 'varchar(255)', (c) => c.primaryKey())
        .addColumn('total', 'bigint', (c) => c.notNull())
        .addColumn('differing', 'bigint', (c) => c.notNull())
        .addColumn('legacy_ms_total', 'double precision', (c) => c.notNull())
        .addColumn('translated_ms_total', 'double precision', (c) => c.notNull())
        .execute();
      await db.schema.createTable('compare_fields')
        .addColumn('route', 'varchar(255)', (c) => c.notNull())
        .addColumn('path', 'varchar(512)', (c) => c.notNull())
        .addColumn('kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('count', 'bigint', (c) => c.notNull())
        .addColumn('noise', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('compare_fields_pk', ['route', 'path', 'kind'])
        .execute();
      await db.schema.createTable('compare_samples')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('route', 'varchar(255)', (c) => c.notNull())
        .addColumn('path', 'varchar(512)', (c) => c.notNull())
        .addColumn('kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('legacy', 'text')
        .addColumn('translated', 'text')
        .addColumn('request', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('compare_samples_field').on('compare_samples').columns(['route', 'path', 'kind']).execute();
    },
  },
  '0004_id_map_by_uuid': {
    async up(db: Kysely<any>) {
      // the comparison resolves uuids of any type at once
      await db.schema.createIndex('id_map_uuid').on('id_map').column('uuid').execute();
    },
  },
  '0005_id_map_one_tree': {
    async up(db: Kysely<any>) {
      // one B-tree keyed (uuid, type) answers look-ups by uuid with or without a type: every emitted
      // render costs one index insert instead of four (table, primary key, uuid and v1-id indexes)
      const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
      await db.schema.createTable('id_map_next')
        .addColumn('uuid', 'varchar(36)', (c) => c.notNull())
        .addColumn('type', 'varchar(16)', (c) => c.notNull())
        .addColumn('v1_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('source', 'varchar(16)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('id_map_key', ['uuid', 'type'])
        .$call((b) => (sqlite ? b.modifyEnd(sql`without rowid`) : b))
        .execute();
      await sql`insert into id_map_next (uuid, type, v1_id, source, created_at) select uuid, type, v1_id, source, created_at from id_map`.execute(db);
      await db.schema.dropTable('id_map').execute();
      await db.schema.alterTable('id_map_next').renameTo('id_map').execute();
    },
  },
  '0006_hardening': {
    async up(db: Kysely<any>) {
      // facts about the store itself (the encryption key check)
      await db.schema.createTable('gateway_meta')
        .addColumn('key', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
      // login attempts per account and per address, in fixed windows, shared by every instance
      await db.schema.createTable('login_limits')
        .addColumn('key', 'varchar(400)', (c) => c.primaryKey())
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .execute();
      // webhook deliveries already applied, by the signed body id (every instance sees them)
      await db.schema.createTable('webhook_events')
        .addColumn('id', 'varchar(128)', (c) => c.primaryKey())
        .addColumn('team', 'varchar(128)', (c) => c.notNull())
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_events_received').on('webhook_events').column('received_at').execute();
      // the newest state applied per render (out-of-order deliveries never move a render back)
      await db.schema.createTable('render_versions')
        .addColumn('v1_id', 'varchar(128)', (c) => c.primaryKey())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('rank', 'integer', (c) => c.notNull())
        .execute();
      // idempotency claims: a lease (a crashed holder's claim is recovered), what the attempt is creating, and its render
      await db.schema.alterTable('idempotency').addColumn('lease_until', 'bigint').execute();
      await db.schema.alterTable('idempotency').addColumn('started_at', 'bigint').execute();
      await db.schema.alterTable('idempotency').addColumn('project_v1', 'varchar(128)').execute();
      await db.schema.alterTable('idempotency').addColumn('render_name', 'text').execute();
      await db.schema.alterTable('idempotency').addColumn('render_v1_id', 'varchar(128)').execute();
    },
  },
  '0007_render_index': {
    async up(db: Kysely<any>) {
      // one row per indexed team: its v1 object and members, backfill state, sync times, and the sync lease
      await db.schema.createTable('index_teams')
        .addColumn('team_id', 'varchar(128)', (c) => c.primaryKey())
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('members', 'text', (c) => c.notNull())
        .addColumn('state', 'varchar(16)', (c) => c.notNull())
        .addColumn('backfilled_at', 'bigint')
        .addColumn('synced_at', 'bigint')
        .addColumn('webhook_at', 'bigint')
        .addColumn('lease_holder', 'varchar(64)')
        .addColumn('lease_until', 'bigint')
        .execute();
      // projects with their templates; `backfilled` is the per-project checkpoint of the first walk
      await db.schema.createTable('index_projects')
        .addColumn('project_id', 'varchar(128)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('project', 'text', (c) => c.notNull())
        .addColumn('templates', 'text')
        .addColumn('backfilled', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('index_projects_team').on('index_projects').column('team_id').execute();
      // every render as v1 last showed it (newest state wins: updated_at, then the lifecycle rank)
      await db.schema.createTable('index_renders')
        .addColumn('render_id', 'varchar(128)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('project_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('rank', 'integer', (c) => c.notNull())
        .addColumn('seen_at', 'bigint', (c) => c.notNull())
        .addColumn('render', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('index_renders_team').on('index_renders').column('team_id').execute();
    },
  },
  '0008_index_renders_by_project': {
    async up(db: Kysely<any>) {
      // dropping a project's renders (a project gone from v1) without a scan of every render
      await db.schema.createIndex('index_renders_project').on('index_renders').column('project_id').execute();
    },
  },
  '0009_index_head_marks': {
    async up(db: Kysely<any>) {
      // the newest created_at of a project as of the last walk of its list that completed: where the next head sync
      // may stop (renders that arrived by webhook since do not move it), kept across restarts and instances
      await db.schema.alterTable('index_projects').addColumn('head_mark', 'double precision').execute();
    },
  },
  '0010_compare_samples_redacted': {
    async up(db: Kysely<any>) {
      // comparison samples stored before requests and values were redacted (an ?access_token= in the request line, a
      // token in an answer) are redacted now — by rules frozen with this migration (redaction-0010.ts), never by
      // today's compare/redact.ts: replayed later, 0010 must write what it wrote when it was made
      const rows = await db.selectFrom('compare_samples').select(['id', 'path', 'request', 'legacy', 'translated']).execute();
      for (const r of rows as { id: string; path: string; request: string; legacy: string | null; translated: string | null }[]) {
        const value = (v: string | null) => {
          if (v === null) return null;
          try { return JSON.stringify(redactValue0010(r.path, JSON.parse(v))); } catch { return JSON.stringify(redactValue0010(r.path, v)); }
        };
        await db.updateTable('compare_samples').set({ request: redactText0010(r.request), legacy: value(r.legacy), translated: value(r.translated) })
          .where('id', '=', r.id).execute();
      }
    },
  },
};
