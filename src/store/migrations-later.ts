import { SqliteAdapter, sql, type Kysely, type Migration } from 'kysely';

/** The store's migrations from 0011 on (client profiles onwards). Append the next one here; never edit a released one. */
export const LATER_MIGRATIONS: Record<string, Migration> = {
  '0011_client_shapes': {
    async up(db: Kysely<any>) {
      // the migration guide's client profiles: per client (user or static token id, and User-Agent family) and query
      // shape (a request without its values), counts, errors, latency, v1 calls and comparisons; bounded per client
      await db.schema.createTable('client_shapes')
        .addColumn('client', 'varchar(160)', (c) => c.notNull())
        .addColumn('shape_key', 'varchar(64)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('shape', 'text', (c) => c.notNull())
        .addColumn('count', 'bigint', (c) => c.notNull())
        .addColumn('errors', 'bigint', (c) => c.notNull())
        .addColumn('ms_total', 'double precision', (c) => c.notNull())
        .addColumn('ms_max', 'double precision', (c) => c.notNull())
        .addColumn('calls', 'text', (c) => c.notNull())
        .addColumn('first_seen', 'bigint', (c) => c.notNull())
        .addColumn('last_seen', 'bigint', (c) => c.notNull())
        .addColumn('compared', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('differing', 'bigint', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('client_shapes_pk', ['client', 'shape_key'])
        .execute();
      await db.schema.createIndex('client_shapes_seen').on('client_shapes').column('last_seen').execute();
    },
  },
  '0012_compare_samples_client': {
    async up(db: Kysely<any>) {
      // a comparison sample names the client it came from (user or static token id, and User-Agent family)
      await db.schema.alterTable('compare_samples').addColumn('client', 'varchar(160)').execute();
    },
  },
  '0013_refresh_rotated_at': {
    async up(db: Kysely<any>) {
      // when a refresh token was rotated: session mode keeps it good for SESSION_REFRESH_GRACE_PERIOD after (Directus 10.10)
      await db.schema.alterTable('refresh_tokens').addColumn('rotated_at', 'bigint').execute();
    },
  },
  '0014_index_sync_budget': {
    async up(db: Kysely<any>) {
      // the sync's v1 calls counted in the store, shared by every instance: one row per scope (a team, a key) and minute
      await db.schema.createTable('index_sync_calls')
        .addColumn('scope', 'varchar(200)', (c) => c.notNull())
        .addColumn('minute', 'bigint', (c) => c.notNull())
        .addColumn('used', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('index_sync_calls_pk', ['scope', 'minute'])
        .execute();
      // when the last sync of a team started (on whichever instance)
      await db.schema.alterTable('index_teams').addColumn('sync_started_at', 'bigint').execute();
    },
  },
  '0015_index_change_marks': {
    async up(db: Kysely<any>) {
      // a change number per render row, so an instance that lost the change bus reads only what changed since its
      // mark (src/store/replica-store.ts): PostgreSQL the writing transaction's id, SQLite a counter that never goes back
      await db.schema.alterTable('index_renders').addColumn('change_seq', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      // the change number of the last rewrite of the team's rows that cannot be followed row by row (a repair, a dropped project)
      await db.schema.alterTable('index_teams').addColumn('reset_seq', 'bigint').execute();
      // a team's rows by change number; it also serves every look-up by team the single-column index did
      await db.schema.createIndex('index_renders_changes').on('index_renders').columns(['team_id', 'change_seq']).execute();
      await db.schema.dropIndex('index_renders_team').execute();
      if (db.getExecutor().adapter instanceof SqliteAdapter) {
        // SQLite: the newest change number handed out, moved in the writing statement itself (a trigger), never back
        // when rows are deleted (the newest row's number would)
        await db.schema.createTable('index_changes').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('seq', 'bigint', (c) => c.notNull()).execute();
        await sql`insert into index_changes (id, seq) values (1, 0)`.execute(db);
        const moves = [
          ['index_renders_added', 'insert on index_renders', 'change_seq'],
          ['index_renders_changed', 'update of change_seq on index_renders', 'change_seq'],
          ['index_teams_reset', 'update of reset_seq on index_teams', 'reset_seq'],
        ] as const;
        for (const [name, event, column] of moves) {
          await sql.raw(`create trigger ${name} after ${event} when new.${column} > 0 begin
            update index_changes set seq = new.${column} where id = 1 and seq < new.${column}; end`).execute(db);
        }
      }
    },
  },
  '0016_index_dropped_projects': {
    async up(db: Kysely<any>) {
      // the projects dropped from the render index (gone from v1), with the change number of the drop: an instance that
      // lost the change bus drops them too, and reads one whole again if it came back meanwhile
      await db.schema.createTable('index_dropped_projects')
        .addColumn('project_id', 'varchar(128)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('change_seq', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('index_dropped_projects_changes').on('index_dropped_projects').columns(['team_id', 'change_seq']).execute();
      if (db.getExecutor().adapter instanceof SqliteAdapter) {
        for (const [name, event] of [['index_dropped_projects_added', 'insert'], ['index_dropped_projects_changed', 'update of change_seq']] as const) {
          await sql.raw(`create trigger ${name} after ${event} on index_dropped_projects when new.change_seq > 0 begin
            update index_changes set seq = new.change_seq where id = 1 and seq < new.change_seq; end`).execute(db);
        }
      }
    },
  },
  '0017_deprecations': {
    async up(db: Kysely<any>) {
      // the operator's deprecation rules (src/deprecate/), the same on every instance
      await db.schema.createTable('deprecation_rules')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('rule', 'text', (c) => c.notNull())
        .addColumn('set_at', 'bigint', (c) => c.notNull())
        .execute();
      // the calls each rule matched, per client and day (kept a bounded number of days: src/store/deprecations.ts)
      await db.schema.createTable('deprecation_calls')
        .addColumn('rule_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('client', 'varchar(200)', (c) => c.notNull())
        .addColumn('day', 'integer', (c) => c.notNull())
        .addColumn('calls', 'bigint', (c) => c.notNull())
        .addColumn('refused', 'bigint', (c) => c.notNull())
        .addColumn('observed', 'bigint', (c) => c.notNull())
        .addColumn('last_seen', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('deprecation_calls_pk', ['rule_id', 'client', 'day'])
        .execute();
    },
  },
  '0018_compare_request_sets': {
    async up(db: Kysely<any>) {
      // a compared answer's request line, kept once for all its samples (each sample carried it whole before)
      await db.schema.createTable('compare_requests')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('request', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.alterTable('compare_samples').addColumn('request_id', 'varchar(36)').execute();
    },
  },
  '0019_render_data_sizes': {
    async up(db: Kysely<any>) {
      // each render's data weighed without reading it (a read weighs the data it is about to read: length(data) read
      // every value whole on SQLite — 300 MB for one refused expansion); rows written before are weighed once, here
      await db.schema.alterTable('render_data').addColumn('data_chars', 'bigint').execute();
      await sql`update render_data set data_chars = length(data)`.execute(db);
    },
  },
  '0020_client_labels': {
    async up(db: Kysely<any>) {
      // the migration report's labels for its clients, set by the operator (legacy-gateway migrate label)
      await db.schema.createTable('client_labels')
        .addColumn('client', 'varchar(200)', (c) => c.primaryKey())
        .addColumn('label', 'varchar(200)', (c) => c.notNull())
        .addColumn('set_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '0021_overlays_by_time': {
    async up(db: Kysely<any>) {
      // a resync reads back the overlays written since the newest it read (src/store/render-extras.ts)
      await db.schema.createIndex('overlays_by_time').on('overlays').columns(['type', 'updated_at']).execute();
    },
  },
  '0022_client_agents': {
    async up(db: Kysely<any>) {
      // the User-Agents a client of family `other` came with, so the operator can give them families (mappings/clients.json)
      await db.schema.createTable('client_agents')
        .addColumn('client', 'varchar(160)', (c) => c.notNull())
        .addColumn('agent', 'varchar(120)', (c) => c.notNull())
        .addColumn('count', 'bigint', (c) => c.notNull())
        .addColumn('last_seen', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('client_agents_pk', ['client', 'agent'])
        .execute();
    },
  },
  '0023_webhook_health': {
    async up(db: Kysely<any>) {
      // each instance's webhook receiver, renewed while it runs: a start that finds none renewed lately knows the window no
      // receiver answered in (src/store/webhook-health.ts)
      await db.schema.createTable('webhook_receivers')
        .addColumn('instance', 'varchar(200)', (c) => c.primaryKey())
        .addColumn('since', 'bigint', (c) => c.notNull())
        .addColumn('seen_at', 'bigint', (c) => c.notNull())
        .addColumn('stopped', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      // windows in which deliveries may have been lost: no receiver up, or deliveries refused ('' for every team)
      await db.schema.createTable('webhook_gaps')
        .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('from_ms', 'bigint', (c) => c.notNull())
        .addColumn('to_ms', 'bigint', (c) => c.notNull())
        .addColumn('reason', 'varchar(20)', (c) => c.notNull())
        .execute();
      // the end of the last window the team's renders were walked again for (its catch-up)
      await db.schema.alterTable('index_teams').addColumn('webhook_checked_to', 'bigint').execute();
    },
  },
};
