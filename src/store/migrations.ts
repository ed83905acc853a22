import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { FIRST_MIGRATIONS } from './migrations-first.js';
import { LATER_MIGRATIONS } from './migrations-later.js';

/** The one set of migrations, for SQLite and PostgreSQL alike, in name order. Append (to migrations-later.ts); never edit a released one. */
const migrations: Record<string, Migration> = { ...FIRST_MIGRATIONS, ...LATER_MIGRATIONS };

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/** Brings the store up to date (or to `target`, a migration name); returns the names of the migrations it applied. */
export async function migrate(db: Kysely<any>, target?: string): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new StaticProvider() });
  const { error, results } = target ? await migrator.migrateTo(target) : await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
