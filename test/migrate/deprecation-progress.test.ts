import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressOf } from '../../src/deprecate/progress.js';
import { ManualClock } from '../../src/lib/clock.js';
import { callsChart, clientDeprecations, deprecationsMd } from '../../src/migrate/deprecation-progress.js';
import { reportHtml, reportMarkdown } from '../../src/migrate/render.js';
import type { MigrationReport } from '../../src/migrate/report.js';
import { DAY_MS } from '../../src/store/deprecations.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSim, type RunningSim } from '../helpers/sim.js';

/**
 * The migration report's view of the deprecation rules: per client, its rules, deadline, days left, its calls per day
 * since each rule was set (an inline SVG chart in the HTML report), the last call, and "moved" once it stopped calling.
 */
const OP = { authorization: 'Bearer operator-token-0123456789' };
const DAY0 = Date.UTC(2026, 3, 1, 9);
const clock = new ManualClock(DAY0);
let sim: RunningSim;
let gw: TestGateway;
let userId: string;

beforeAll(async () => {
  sim = await startSim();
  gw = await startGateway({}, {}, { sim, clock });
  userId = await gw.addUser(0, 'mig@example.com');
});
afterAll(async () => {
  await gw?.close();
  await sim?.sim.close();
});

const call = async (url: string, ua: string) =>
  gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${await gw.login('mig@example.com')}`, 'user-agent': ua } });
const report = async (client: string) => {
  const res = await gw.app.inject({ method: 'GET', url: `/_gateway/migrate?prove=false&client=${encodeURIComponent(client)}`, headers: OP });
  expect(res.statusCode).toBe(200);
  return res.json().data as MigrationReport;
};

describe('a client\'s deprecations in the migration report', () => {
  it('shows its rule, deadline, days left and calls per day; "moved" once it stopped calling; the HTML has the chart', async () => {
    const rules = { rules: [{ id: 'renders-list', match: { route: 'GET /renders' }, deprecation: '2026-04-01T00:00:00Z', sunset: '2026-06-30T00:00:00Z',
      link: 'https://docs.example.com/moving' }] };
    expect((await gw.app.inject({ method: 'PUT', url: '/_gateway/deprecations', headers: OP, payload: rules })).statusCode).toBe(200);
    // the python client calls the deprecated route three days running; the curl client only another route
    for (let day = 0; day < 3; day++) {
      clock.set(DAY0 + day * DAY_MS);
      for (let i = 0; i <= day; i++) expect((await call('/renders?limit=1', 'python-requests/2.31')).statusCode).toBe(200);
    }
    expect((await call('/projects?limit=1', 'curl/8.4.0')).statusCode).toBe(200);
    await gw.deps.shapes.flush();

    let r = await report(`user:${userId}`);
    const py = r.clients.find((c) => c.client === `user:${userId}~python-requests`)!;
    expect(py.deprecations).toEqual([{
      rule: 'renders-list', route: 'GET /renders', mode: 'enforce', deprecation: '2026-04-01T00:00:00Z', sunset: '2026-06-30T00:00:00Z',
      days_left: 88, link: 'https://docs.example.com/moving', set_at: '2026-04-01T09:00:00Z', calls: 6, refused: 0, observed: 0,
      last_call: '2026-04-03T09:00:00.000Z', status: 'calling',
      days: [{ day: '2026-04-01', calls: 1, refused: 0, observed: 0 }, { day: '2026-04-02', calls: 2, refused: 0, observed: 0 },
        { day: '2026-04-03', calls: 3, refused: 0, observed: 0 }],
    }]);
    expect(r.clients.find((c) => c.client === `user:${userId}~curl`)!.deprecations).toBeUndefined();

    clock.set(DAY0 + 2 * DAY_MS + 8 * DAY_MS); // a week and a day without a call
    r = await report(`user:${userId}~python-requests`);
    const moved = r.clients.find((c) => c.client === `user:${userId}~python-requests`)!;
    expect(moved.deprecations![0]).toMatchObject({ status: 'moved', days_left: 80, calls: 6 });
    const md = reportMarkdown(r);
    expect(md).toContain('| renders-list | `GET /renders` | enforce | 2026-06-30T00:00:00Z | 80 | 6 | 0 | 2026-04-03T09:00:00.000Z | moved |');
    const html = reportHtml(r);
    const svg = /<svg [^>]*aria-label="calls per day to GET \/renders \(renders-list\)[^"]*"[^>]*>.*?<\/svg>/.exec(html);
    expect(svg).not.toBeNull();
    expect(svg![0].match(/<rect /g)).toHaveLength(3); // three days with calls in the window
    expect(svg![0]).toContain('<title>2026-04-03: 3 calls</title>');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('&lt;!-- deprecated-calls');
  });
});

describe('pure parts', () => {
  const stored = [{ id: 'r', rule: { id: 'r', match: { route: 'GET /renders' }, deprecation: '2026-01-01T00:00:00Z' }, setAt: Date.UTC(2026, 0, 1) }];
  const now = Date.UTC(2026, 0, 5, 12);
  it('a client whose profile shows the route but no call since the rule was set is quiet, then moved after a week', () => {
    const c = { client: 'user:a~curl', shapes: [{ shape: { method: 'GET', route: '/renders' }, lastSeen: '2025-12-20T00:00:00.000Z' }] };
    const rule = stored[0]!.rule as never;
    const ruleFor = (m: string, route: string) => (m === 'GET' && route === '/renders' ? rule : undefined);
    expect(clientDeprecations(c, ruleFor, progressOf(stored, [], now), now)[0]).toMatchObject({ status: 'quiet', calls: 0, last_call: '2025-12-20T00:00:00.000Z' });
    const later = now + 7 * DAY_MS;
    expect(clientDeprecations(c, ruleFor, progressOf(stored, [], later), later)[0]?.status).toBe('moved');
    expect(clientDeprecations({ ...c, shapes: [] }, ruleFor, progressOf(stored, [], now), now)).toEqual([]);
  });
  it('a text sparkline in Markdown; the chart line is a comment there and an SVG only in HTML; an unknown line is not a chart', () => {
    const rows = [{ rule: 'r', client: 'user:a~curl', day: Math.floor(now / DAY_MS), calls: 4, refused: 1, observed: 0, lastSeen: now }];
    const d = clientDeprecations({ client: 'user:a~curl', shapes: [] }, () => undefined, progressOf(stored, rows, now), now);
    const lines = deprecationsMd({ client: 'user:a~curl', deprecations: d }, now);
    expect(lines.find((l) => l.startsWith('Calls per day'))).toMatch(/2025-11-07 – 2026-01-05, at most 4: ·{59}█$/);
    const chart = callsChart([{ client: 'user:a~curl', deprecations: d }], '<!-- deprecated-calls user:a~curl r -->', now);
    expect(chart).toMatch(/^<svg .*<rect x="236" y="0" width="3" height="40" fill="#888">.*<rect x="236" y="30" width="3" height="10" fill="#a4161a"\/><\/svg>$/);
    expect(callsChart([], 'Calls per day', now)).toBeUndefined();
  });
});
