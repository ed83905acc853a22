import { describe, expect, it } from 'vitest';
import { execute } from '../../src/exec/execute.js';
import type { Execution } from '../../src/exec/execution.js';
import { ReplicaSource } from '../../src/exec/replica-source.js';
import type { RecordSource } from '../../src/exec/source.js';
import { planQuery } from '../../src/plan/plan.js';
import { unlimited } from '../../src/query/budget.js';
import { parseQuery } from '../../src/query/parse-query.js';
import type { ResourceSchema } from '../../src/query/schema.js';
import { recordBuilder } from '../../src/replica/team/records.js';
import { ReplicaSnapshot } from '../../src/replica/reads/snapshot.js';
import { TeamReplica } from '../../src/replica/team/team-replica.js';
import type { IdMapStore, IdPair } from '../../src/store/idmap.js';
import { derivedUuid, IdTranslator } from '../../src/translate/ids.js';
import { RENDER_STATUSES, type V1Team } from '../../src/v1/schemas.js';
import { ctx, mappings, schemas } from '../query/fixtures.js';

/** A question on the columns that waited for a large team's order being sorted, the sort dropped meanwhile. */
const T0 = 1_700_000_000;

async function ask(source: RecordSource, raw: Record<string, unknown>) {
  const query = parseQuery(raw, schemas.render as ResourceSchema, ctx());
  const plan = planQuery(query, 'render', { statusToV1: mappings.status.toV1, schemas });
  let how: Execution | undefined;
  const result = await execute('render', query, plan, source, { schemas, budget: unlimited(), report: (h) => { how = h; } });
  const data: unknown[] = [...result.data];
  if (result.stream) for await (const x of result.stream) data.push(x);
  return { answer: { data, meta: result.meta }, how };
}

describe('a question that waited for a kept order', () => {
  it('is answered on the rows as they are once the sort it waited for was dropped (imported ids changed meanwhile)', async () => {
    let pairs: IdPair[] = [];
    const ids = new IdTranslator({ imported: async () => pairs } as unknown as IdMapStore);
    const builder = recordBuilder({ ids, mappings, timeUnit: 'auto' }, () => ({}), {});
    const team: V1Team = { id: 'team_big', name: 'big', account_id: 'acct_big', role: 'admin', created_at: T0 };
    const t = new TeamReplica({ team, members: [], state: 'ready', backfilledAt: 1, syncedAt: 1, webhookAt: null }, builder);
    t.setProject({
      project: { id: 'proj_0', name: 'p0', team: { id: team.id, name: team.name }, created_by: null, created_at: T0, updated_at: null, thumbnail_url: null },
      templates: [], backfilled: true,
    }, 1);
    for (let i = 0; i < 9_000; i++) {
      t.apply({
        id: `rend_${i}`, name: ['alpha', 'Beta', 'gamma'][i % 3]!, status: RENDER_STATUSES[i % RENDER_STATUSES.length]!, type: 'cloud',
        project: { id: 'proj_0', team: team.id }, created_by: null, created_at: T0 + i, updated_at: null,
      }, 1);
    }
    const source = new ReplicaSource(new ReplicaSnapshot([t], 25), { refresh: async () => {}, answered: () => {}, flush: async () => {}, data: async () => new Map(), dataSizes: async () => new Map(), now: 10 });
    const old = derivedUuid('render', 'rend_5');
    const raw = { filter: JSON.stringify({ id: { _neq: old } }), meta: 'filter_count', sort: 'title', limit: '3', fields: 'id,title' };
    const asked = ask(source, raw);
    // rend_5 is given an imported uuid while the order is sorted (every order is dropped): it now passes the filter
    await new Promise((r) => setImmediate(r));
    pairs = [{ type: 'render', v1Id: 'rend_5', uuid: '11111111-2222-4333-8444-555555555555', source: 'imported' }];
    await ids.load();
    t.invalidateRecords();
    const onColumns = await asked;
    const onRecords = await ask(new Proxy(source, { get: (s, k) => (k === 'columns' ? undefined : Reflect.get(s, k, s)) }), raw);
    expect(onRecords.answer.meta).toEqual({ filter_count: 9_000 });
    expect(onColumns.answer).toEqual(onRecords.answer);
  });
});
