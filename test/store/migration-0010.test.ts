import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';
import { databases } from '../helpers/databases.js';

/**
 * Migration 0010 redacts the comparison samples stored before redaction existed, by rules frozen inside the store: a
 * migration that followed today's redaction would write something else each time the redaction changes. The rules of
 * today's comparison records and logs are planted with other behaviour here (every value and line they see becomes
 * PLANTED, no name is a secret): 0010 must write what the frozen rules write, case by case, on SQLite and PostgreSQL.
 */
vi.mock('../../src/compare/redact.js', () => ({
  REDACTED: 'PLANTED', redactRequest: () => 'PLANTED', redactValue: () => 'PLANTED', requestLine: () => 'PLANTED',
}));
vi.mock('../../src/log/scrub.js', async (original) => ({
  ...(await original<typeof import('../../src/log/scrub.js')>()), scrubText: () => 'PLANTED', isSecretName: () => false,
}));

const dbs = await databases();
const opened: Db[] = [];
afterAll(async () => { for (const db of opened) await db.close().catch(() => undefined); });

const deep = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : [deep(depth - 1, leaf)]);
const SK = (c: string) => `sk_${c.repeat(32)}`;
const JWT = 'eyJhbGciOiJI.eyJzdWIiOiJ1.c2ln';

/** A stored sample as it was before 0010, and what 0010 makes of it (worked out by hand from the frozen rules). */
const CASES: { path: string; request: [string, string]; legacy: [string | null, string | null]; translated: [string | null, string | null] }[] = [
  { // a credential parameter after a raw quote in the query (the whole query is scrubbed); a value under `token` whole
    path: 'data[].token',
    request: ["GET /renders?title='&token=tok-one&limit=1", "GET /renders?title='&token=[Redacted]&limit=1"],
    legacy: [JSON.stringify('tok-one'), '"[Redacted]"'],
    translated: [null, null],
  },
  { // a parameter's name percent-encoded; a JWT inside another field's text
    path: 'data[].title',
    request: [`GET /renders?%61ccess_token=${JWT}&fields=*`, 'GET /renders?%61ccess_token=[Redacted]&fields=*'],
    legacy: [JSON.stringify(`t ${JWT}`), '"t [Redacted]"'],
    translated: [JSON.stringify('plain'), '"plain"'],
  },
  { // free text: a bearer, a name=value pair, a v1 key; an object's credential-named keys (any case) and strings;
    // a value that is not JSON is scrubbed as text
    path: 'data[].meta',
    request: [`GET /renders/1 Authorization: Bearer abc.def password=hunter2 ${SK('a')}`,
      'GET /renders/1 Authorization: Bearer [Redacted] password=[Redacted] sk_[Redacted]'],
    legacy: [JSON.stringify({ api_key: 'k1', note: 'see ?link=abc', list: [SK('b')], n: null, secret: null, Nested: { Password: 'p' } }),
      '{"api_key":"[Redacted]","note":"see ?link=[Redacted]","list":["sk_[Redacted]"],"n":null,"secret":null,"Nested":{"Password":"[Redacted]"}}'],
    translated: ['oops ?key=v1 rest', '"oops ?key=[Redacted] rest"'],
  },
  { // nothing to redact; past 64 levels a value is kept as it is
    path: 'data[]',
    request: ['GET /renders?limit=1', 'GET /renders?limit=1'],
    legacy: [JSON.stringify(deep(70, 'Bearer abc')), JSON.stringify(deep(70, 'Bearer abc'))],
    translated: [JSON.stringify(['Bearer abc']), '["Bearer [Redacted]"]'],
  },
  { // the leaf of a path with brackets; credential parameters in any case; a JSON null
    path: 'data[].refresh_token[]',
    request: ['GET /x?refresh_token=a&REFRESH_TOKEN=b', 'GET /x?refresh_token=[Redacted]&REFRESH_TOKEN=[Redacted]'],
    legacy: [JSON.stringify(['r1', 'r2']), '"[Redacted]"'],
    translated: ['null', 'null'],
  },
];

describe.each(dbs)('migration 0010 on $name', ({ url }) => {
  it('redacts stored samples by its own frozen rules, whatever today\'s redaction does', async () => {
    const db = await openDb(url);
    opened.push(db);
    await migrate(db.kysely, '0009_index_head_marks');
    for (const [i, c] of CASES.entries()) {
      await db.kysely.insertInto('compare_samples').values({
        id: `sample-${i}`, route: 'GET /renders', path: c.path, kind: 'value', legacy: c.legacy[0], translated: c.translated[0],
        request: c.request[0], created_at: i,
      } as never).execute();
    }
    expect(await migrate(db.kysely, '0010_compare_samples_redacted')).toEqual(['0010_compare_samples_redacted']);
    const rows = await db.kysely.selectFrom('compare_samples').select(['request', 'legacy', 'translated']).orderBy('created_at').execute();
    expect(rows).toEqual(CASES.map((c) => ({ request: c.request[1], legacy: c.legacy[1], translated: c.translated[1] })));
  });
});

describe('migration 0010\'s rules', () => {
  const IMPORT = /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
  const imports = (file: string) => [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => m[1]);

  it('live inside the store: the migrations import nothing outside it, the frozen rules nothing at all', () => {
    expect(imports('src/store/migrations.ts').filter((s) => s!.startsWith('..'))).toEqual([]);
    expect(imports('src/store/redaction-0010.ts')).toEqual([]);
  });
});
