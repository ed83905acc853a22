import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { DeprecationStore } from '../../src/store/deprecations.js';
import { migrate } from '../../src/store/migrations.js';
import { databases } from '../helpers/databases.js';

/** The deprecation tables on SQLite and PostgreSQL: rules replaced whole, counts added up, one principal's clients read. */
const dbs = await databases();

describe.each(dbs)('deprecation store on $name', ({ url }) => {
  let db: Db;
  let store: DeprecationStore;
  const topics: string[] = [];
  beforeAll(async () => {
    db = await openDb(url);
    await migrate(db.kysely);
    store = new DeprecationStore(db.kysely, { publish: async (t: string) => { topics.push(t); } });
  });
  afterAll(async () => db.close());

  it('replaces the rules whole, keeps set_at of an id set before, drops the counts of a removed rule, announces each change', async () => {
    await store.replace([{ id: 'a' }, { id: 'b' }], 1000);
    await store.addCalls([{ rule: 'a', client: 'user:x~curl', day: 1, calls: 1, refused: 0, observed: 0, last: 5 },
      { rule: 'b', client: 'user:x~curl', day: 1, calls: 2, refused: 1, observed: 0, last: 6 }], 2 * 86_400_000);
    const again = await store.replace([{ id: 'b' }, { id: 'c' }], 2000);
    expect(again.map((r) => [r.id, r.setAt])).toEqual([['b', 1000], ['c', 2000]]);
    expect((await store.calls()).map((r) => r.rule)).toEqual(['b']);
    expect(topics).toEqual(['deprecations', 'deprecations']);
  });

  it('adds counts up per (rule, client, day), keeps the latest last call, and reads one principal\'s clients exactly', async () => {
    const add = (client: string, calls: number, last: number) =>
      store.addCalls([{ rule: 'c', client, day: 3, calls, refused: 0, observed: calls, last }], 3 * 86_400_000);
    await add('static:ab_cd~curl', 2, 10);
    await add('static:ab_cd~curl', 3, 7);
    await add('static:abXcd~curl', 1, 9); // `_` is no wildcard
    await add('static:ab_cd', 1, 8);
    const rows = await store.calls('static:ab_cd');
    expect(rows.map((r) => [r.client, r.calls, r.observed, r.lastSeen])).toEqual([['static:ab_cd', 1, 1, 8], ['static:ab_cd~curl', 5, 5, 10]]);
  });

  it('drops days older than the days kept', async () => {
    await store.addCalls([{ rule: 'c', client: 'user:old~curl', day: 10, calls: 1, refused: 0, observed: 0, last: 1 }], (10 + 401) * 86_400_000);
    expect((await store.calls()).filter((r) => r.day <= 10)).toEqual([]);
  });
});
