import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';

/** A fresh database per test file: an SQLite file, and a new PostgreSQL database on the test server. */
export async function databases(): Promise<{ name: 'sqlite' | 'postgres'; url: string }[]> {
  const sqlite = join(mkdtempSync(join(tmpdir(), 'gw-sqlite-')), 'store.db');
  if (process.env.TEST_SQLITE_ONLY) return [{ name: 'sqlite', url: sqlite }]; // mutation runs (vitest.mutation.config.ts)
  const base = inject('pgUrl');
  const dbName = `gw_${randomBytes(6).toString('hex')}`;
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const u = new URL(base);
  u.pathname = `/${dbName}`;
  return [{ name: 'sqlite', url: sqlite }, { name: 'postgres', url: u.toString() }];
}
