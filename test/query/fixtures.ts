import { loadMappings } from '../../src/config/mappings.js';
import type { Lookup, Rec } from '../../src/query/compile.js';
import type { ParseContext } from '../../src/query/parse-query.js';

export const mappings = loadMappings('mappings');
export const schemas = mappings.schemas;
export const NOW = new Date('2026-06-15T12:00:00.000Z');
export const USER = '11111111-1111-4111-8111-111111111111';
export const ROLE = '22222222-2222-4222-8222-222222222222';

export const ctx = (o: Partial<ParseContext> = {}): ParseContext => ({
  schemas, dynamic: { now: NOW, userId: USER, roleId: ROLE, user: { id: USER, email: 'me@x.io' } }, limitDefault: 100, ...o,
});

const P1 = 'aaaaaaaa-0000-4000-8000-000000000001';
const P2 = 'aaaaaaaa-0000-4000-8000-000000000002';
const A1 = 'bbbbbbbb-0000-4000-8000-000000000001';
export const projects: Rec[] = [
  { id: P1, title: 'Alpha', account: A1, date_created: '2026-01-01T00:00:00.000Z', user_created: USER, date_updated: null, poster: null, status: 'active', template_reference: null },
  { id: P2, title: 'beta', account: A1, date_created: '2026-02-01T00:00:00.000Z', user_created: null, date_updated: null, poster: null, status: 'active', template_reference: null },
];
export const accounts: Rec[] = [{ id: A1, name: 'Acme', owner: USER, status: 'active', render_credits: null, subscriptions: [] }];

const r = (n: number, o: Partial<Record<string, unknown>>): Rec => ({
  id: `cccccccc-0000-4000-8000-${String(n).padStart(12, '0')}`, user_created: USER, date_created: `2026-0${(n % 6) + 1}-1${n % 9}T10:00:00.000Z`, date_updated: null,
  process_id: `dddddddd-0000-4000-8000-${String(n).padStart(12, '0')}`, account: A1, project: n % 2 ? P1 : P2, title: `Render ${n}`, playback_id: null,
  download_ready: false, status: 'ready', data: {}, output: null, ...o,
});
export const renders: Rec[] = [
  r(1, { title: 'Hello World', status: 'complete', download_ready: true }),
  r(2, { title: 'hello there', status: 'failed' }),
  r(3, { title: null, status: 'draft' }),
  r(4, { title: '', status: 'processing', user_created: null }),
  r(5, { title: 'Ünïcødé', status: 'complete', date_updated: '2026-06-01T00:00:00.000Z' }),
  r(6, { title: 'zeta', status: 'encoding', date_created: '2026-06-15T11:00:00.000Z' }),
  r(7, { title: 'Alpha render', status: 'complete', date_created: '2026-06-15T11:00:00.000Z' }),
];

export const lookup: Lookup = {
  one: (resource, id) => (resource === 'project' ? projects : resource === 'account' ? accounts : renders).find((x) => x.id === id),
  many: (_resource, parent, field, parentResource) => {
    if (parentResource === 'project' && field === 'renders') return renders.filter((x) => x.project === parent.id);
    if (parentResource === 'account' && field === 'renders') return renders.filter((x) => x.account === parent.id);
    if (parentResource === 'account' && field === 'projects') return projects.filter((x) => x.account === parent.id);
    return [];
  },
};
export { P1, P2, A1 };
