import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { authentication, createDirectus, readItem, readItems, rest } from '@directus/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as cli } from '../../src/cli/main.js';
import type { ClientReport, MigrationReport } from '../../src/migrate/report.js';
import { equivalentOfShape } from '../../src/migrate/instantiate.js';
import { prove, sampleValues } from '../../src/migrate/prove.js';
import { buildMigrationReport, proofDeps } from '../../src/admin/migration-report.js';
import { reportHtml, reportMarkdown } from '../../src/migrate/render.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

const exec = promisify(execFile);

/**
 * Recorded traffic of several kinds of client — the Directus JS SDK, a Python client (urllib, SEARCH included), curl
 * with a static token, a dashboard polling counts — becomes a migration report whose shapes, v1 equivalents, proofs,
 * blocked fields and verdicts are these; the CLI and the operator route give the same report.
 */
let gw: TestGateway;
let base: string;
let dir: string;
let userA: string;
let userB: string;
let staticId: string;
let report: MigrationReport;
const SEARCH_WORD = 'zebra-secret-words';

async function login(email: string): Promise<string> {
  return gw.login(email, 'sdk-password-123');
}

beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false' });
  dir = mkdtempSync(join(tmpdir(), 'migrate-report-'));
  userA = await gw.addUser(0, 'sdk@example.com', 'sdk-password-123');
  userB = await gw.addUser(1, 'python@example.com', 'python-password-123');
  const t = await gw.deps.users.createStaticToken(userA, 'nightly curl');
  staticId = t.id;
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });

  // 1. the Directus JS SDK (Node's fetch: User-Agent "node")
  const sdk = createDirectus<any>(base).with(authentication('json')).with(rest());
  await (sdk as any).login('sdk@example.com', 'sdk-password-123').catch(() => (sdk as any).login({ email: 'sdk@example.com', password: 'sdk-password-123' }));
  const list = await sdk.request(readItems('renders', { fields: ['id', 'title', 'status'], filter: { status: { _eq: 'complete' } }, sort: ['-date_created'], limit: 5 }));
  await sdk.request(readItems('renders', { fields: ['id', 'title', 'status'], filter: { status: { _eq: 'failed' } }, sort: ['-date_created'], limit: 3 }));
  await sdk.request(readItem('renders', (list as { id: string }[])[0]!.id, { fields: ['id', 'title', 'status'] }));

  // 2. a Python client (urllib): accounts with a legacy-only field, a SEARCH with a search string, a title update
  const py = `
import json, sys, urllib.request
base = sys.argv[1]
def ask(method, path, body=None, token=None):
    req = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body is not None else None)
    req.add_header("Content-Type", "application/json")
    if token: req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req) as res: return json.loads(res.read() or b"null")
tok = ask("POST", "/auth/login", {"email": "python@example.com", "password": "python-password-123"})["data"]["access_token"]
ask("GET", "/accounts?fields=id,name,render_credits", token=tok)
found = ask("SEARCH", "/items/renders", {"query": {"fields": ["id", "title"], "search": "${SEARCH_WORD}", "limit": 10}}, token=tok)
first = ask("GET", "/renders?limit=1&fields=id", token=tok)["data"][0]["id"]
ask("PATCH", "/render/" + first, {"title": "renamed by python"}, token=tok)
print("ok")
`;
  writeFileSync(join(dir, 'client.py'), py);
  expect((await exec('python3', [join(dir, 'client.py'), base])).stdout.trim()).toBe('ok');

  // 3. a curl script with a static token: one render by id
  const id = (list as { id: string }[])[1]!.id;
  for (let i = 0; i < 2; i++) await exec('curl', ['-sf', '-H', `Authorization: Bearer ${t.token}`, `${base}/renders/${id}?fields=id,title,status`]);

  // 4. a dashboard polling counts by status (a browser)
  const dash = await login('sdk@example.com');
  for (let i = 0; i < 5; i++) {
    const res = await fetch(`${base}/renders?aggregate[count]=*&groupBy=status`, { headers: { authorization: `Bearer ${dash}`, 'user-agent': 'Mozilla/5.0 (X11; Linux) Chrome/120' } });
    expect(res.status).toBe(200);
  }
  await gw.deps.shapes.flush();
  const res = await gw.get('/_gateway/migrate', TEST_ENV.GATEWAY_ADMIN_TOKEN);
  expect(res.status).toBe(200);
  report = res.body.data;
}, 120_000);
afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

const client = (id: string): ClientReport => {
  const c = report.clients.find((x) => x.client === id);
  expect(c, `${id} among ${report.clients.map((x) => x.client).join(', ')}`).toBeDefined();
  return c as ClientReport;
};
const keys = (c: ClientReport) => c.shapes.map((s) => s.key).sort();

describe('the migration report of recorded traffic', () => {
  it('names each client by id and User-Agent family, with its shapes', () => {
    expect(report.clients.map((c) => c.client).sort()).toEqual([
      `static:${staticId}~curl`, `user:${userA}~browser`, `user:${userA}~node`, `user:${userB}~python-urllib`,
    ].sort());
    expect(keys(client(`user:${userA}~node`))).toEqual([
      'GET /items/renders fields=id,status,title filter=status _eq ? sort=-date_created paging=limit',
      'GET /items/renders/:id fields=id,status,title',
    ]);
    expect(client(`user:${userA}~node`).shapes.find((s) => s.key.includes('filter'))?.count).toBe(2);
    expect(keys(client(`user:${userB}~python-urllib`))).toEqual([
      'GET /accounts fields=id,name,render_credits',
      'GET /renders fields=id paging=limit',
      'PATCH /render/:id body=title',
      'SEARCH /items/renders fields=id,title search paging=limit',
    ]);
    expect(keys(client(`static:${staticId}~curl`))).toEqual(['GET /renders/:id fields=id,status,title']);
    const dash = client(`user:${userA}~browser`);
    expect(keys(dash)).toEqual(['GET /renders aggregate=count(*) groupBy=status']);
    expect(dash.shapes[0]).toMatchObject({ count: 5, errorRate: 0 });
    expect(dash.shapes[0]!.gatewayV1CallsMedian).toBeGreaterThan(0);
  });

  it('holds no value: no search string, filter value, id or token', () => {
    const text = JSON.stringify(report.clients.map((c) => c.shapes.map((s) => s.shape)));
    for (const v of [SEARCH_WORD, 'complete', 'failed', 'renamed by python']) expect(text).not.toContain(v);
  });

  it('gives each shape its v1 equivalent from the plan: calls with the cursor loop, status names, client steps', () => {
    const list = client(`user:${userA}~node`).shapes.find((s) => s.key.includes('filter'))!;
    expect(list.equivalent.calls.map((c) => [c.name, c.method, c.path, c.each, c.cursor])).toEqual([
      ['teams', 'GET', '/v1/teams', null, false],
      ['projects', 'GET', '/v1/projects', 'teams', true],
      ['renders', 'GET', '/v1/renders', 'projects', true],
    ]);
    expect(list.equivalent.calls[2]).toMatchObject({ query: { status: '{v1_status}', project_id: '{project.id}', limit: '60' }, perStatus: true });
    expect(list.clientSteps.join(' ')).toMatch(/merge the projects' lists by created_at desc/);
    expect(list.equivalent.statuses).toMatchObject({ ready: ['ready', 'queued'], draft: ['initializing'] });
    const one = client(`static:${staticId}~curl`).shapes[0]!;
    expect(one.equivalent.calls.map((c) => c.path)).toEqual(['/v1/renders/{render_id}']);
    expect(one.equivalent.params[0]).toMatchObject({ name: 'render_id', v1: expect.stringMatching(/^rend_/) });
    expect(one.clientSteps).toEqual([]);
    const dash = client(`user:${userA}~browser`).shapes[0]!;
    expect(dash.clientSteps).toEqual(['count(*) grouped by status']);
    for (const s of [list, one, dash]) {
      expect(s.snippets.node).toContain('next_cursor');
      expect(s.snippets.python).toContain('import json, unicodedata, urllib.request');
      expect(s.snippets.curl).toMatch(/^#!\/bin\/sh/);
    }
  });

  it('proves every read: equal, or differs naming the fields; writes are not run', () => {
    for (const c of report.clients) {
      for (const s of c.shapes) {
        const p = s.proof!;
        expect(p, s.key).toBeDefined();
        if (s.shape.kind === 'update' || s.shape.kind === 'create') expect(p.result).toBe('not run');
        else if (p.result === 'differs') expect(p.differences.length, `${s.key}: ${p.reason}`).toBeGreaterThan(0);
        else expect(p.result, `${s.key}: ${p.reason}`).toBe('equal');
      }
    }
    const one = client(`static:${staticId}~curl`).shapes[0]!;
    expect(one.proof).toMatchObject({ result: 'equal' });
    expect(one.equivalentV1Calls).toBe(1);
    expect(client(`user:${userA}~browser`).shapes[0]!.proof?.result).toBe('equal');
    expect(client(`user:${userA}~node`).shapes.every((s) => s.proof?.result === 'equal')).toBe(true);
    const py = client(`user:${userB}~python-urllib`).shapes;
    expect(py.filter((s) => s.proof?.result === 'equal').map((s) => s.key).sort()).toEqual([
      'GET /accounts fields=id,name,render_credits', 'GET /renders fields=id paging=limit', 'SEARCH /items/renders fields=id,title search paging=limit',
    ]);
    // the accounts in the legacy uuid order, each snippet deriving the uuid (it was v1's team order: differs; before
    // that "equal": any order was a tie)
    expect(py.find((s) => s.key === 'GET /accounts fields=id,name,render_credits')?.proof?.snippets?.map((x) => x.result)).toEqual(['equal', 'equal', 'equal']);
    expect(client(`user:${userA}~browser`).shapes[0]!.equivalentV1Calls).toBeGreaterThan(2);
    // what a proof in the legacy order cannot show is said: accounts are ordered by a uuid v1 does not have
    expect(py.find((s) => s.key.startsWith('GET /accounts'))?.equivalent.notes.join(' ')).toMatch(/legacy uuid/);
  });

  it('names the blocked fields from the mappings, and gives each client its verdict', () => {
    const py = client(`user:${userB}~python-urllib`);
    expect(py.verdict).toBe('blocked');
    expect(py.blocked.map((b) => b.field).sort()).toEqual(['account.render_credits', 'render.title']);
    expect(py.blocked.find((b) => b.field === 'render.title')?.source).toBe('overlay');
    // every reason, not the blocked field alone (issue 39): the blocked field first, then the shapes' own
    expect(py.reasons[0]).toMatch(/^reads or writes a field with no v1 source: /);
    expect(py.reasons.length).toBeGreaterThan(1);
    expect(client(`static:${staticId}~curl`).verdict).toBe('ready');
    expect(client(`user:${userA}~node`).verdict).toBe('needs work');
    expect(client(`user:${userA}~browser`).verdict).toBe('needs work');
    expect(client(`user:${userA}~browser`).reasons.join('\n')).toMatch(/grouped by status/);
    expect(report.facts.map((f) => f.title)).toEqual(['v1 keys belong to a person', 'Polling becomes a webhook', 'Ids change form', 'Statuses and times']);
  });

  it("says per client how many shapes are exact, partial, differ or are unproven, and the share of its calls that is ready (issue 39)", () => {
    const kinds = new Set<string>();
    for (const c of report.clients) {
      const exact = c.shapes.filter((s) => s.proof?.result === 'equal' && s.snippets.partial.length === 0 && s.equivalent.blocked.length === 0);
      const partial = c.shapes.filter((s) => s.proof?.result === 'equal' && !exact.includes(s));
      const differs = c.shapes.filter((s) => s.proof?.result === 'differs');
      expect(c.readiness, c.client).toEqual({
        exact: exact.length, partial: partial.length, differs: differs.length, unproven: c.shapes.length - exact.length - partial.length - differs.length,
        ready: Math.round((exact.reduce((n, s) => n + s.count, 0) / c.requests) * 10_000) / 10_000,
      });
      for (const [k, v] of Object.entries(c.readiness)) if (k !== 'ready' && v) kinds.add(k);
    }
    // the report's clients meet more than one kind (both sides of the count)
    expect(kinds.has('exact')).toBe(true);
    expect(kinds.size).toBeGreaterThan(1);
    expect(reportMarkdown(report)).toMatch(/\*\*Ready\*\*: \d+\.\d % of its calls — shapes exact \d+, partial \d+, differs \d+, unproven \d+\./);
  });

  it('GET /_gateway/migrate is written a client at a time (chunked over HTTP), the same report as built whole', async () => {
    const res = await fetch(`${base}/_gateway/migrate?prove=false`, { headers: { authorization: `Bearer ${TEST_ENV.GATEWAY_ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-length')).toBeNull();
    const streamed = ((await res.json()) as { data: MigrationReport }).data;
    const whole = await buildMigrationReport(gw.deps, (o) => gw.app.inject(o), { prove: false });
    expect(streamed.clients.length).toBeGreaterThanOrEqual(3);
    expect({ ...streamed, generatedAt: '' }).toEqual(JSON.parse(JSON.stringify({ ...whole, generatedAt: '' })));
  });

  it('legacy-gateway migrate report: the same report as JSON, one client, Markdown and one self-contained HTML file', async () => {
    const env = { ...TEST_ENV, V1_BASE_URL: gw.s.url, DATABASE_URL: gw.config.DATABASE_URL, LOG_LEVEL: 'silent' };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      expect(await cli(['migrate', 'report', '--format', 'json', '--out', join(dir, 'r.json'), '--skip-proof'])).toBe(0);
      expect(await cli(['migrate', 'report', '--client', `user:${userB}`, '--out', join(dir, 'r.md')])).toBe(0);
      expect(await cli(['migrate', 'report', '--format', 'html', '--out', join(dir, 'r.html')])).toBe(0);
      await expect(cli(['migrate', 'report', '--format', 'pdf'])).rejects.toThrow(/--format is md, json or html/);
    } finally {
      process.env = saved;
    }
    const json = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as MigrationReport;
    expect(json.clients.map((c) => [c.client, c.shapes.map((s) => s.key)])).toEqual(report.clients.map((c) => [c.client, c.shapes.map((s) => s.key)]));
    const md = readFileSync(join(dir, 'r.md'), 'utf8');
    expect(md).toContain(`### user:${userB}~python-urllib — blocked`);
    expect(md).not.toContain(`user:${userA}~node`);
    expect(md).toMatch(/Proof\*\*: equal|Proof\*\*: differs/);
    const html = readFileSync(join(dir, 'r.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script|<link|src=|href="http/i);
    expect(html).toContain('<td class="ready">ready</td>');
  }, 180_000); // two proven reports: every read shape's snippets run in three languages

  it('labels a client for the operator: migrate label sets one, --client finds it, each client says who it acts as (issue 39)', async () => {
    const env = { ...TEST_ENV, V1_BASE_URL: gw.s.url, DATABASE_URL: gw.config.DATABASE_URL, LOG_LEVEL: 'silent' };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    const nightly = `static:${staticId}`;
    try {
      // on a principal (every client of the token), and on one client (a user's python program)
      expect(await cli(['migrate', 'label', nightly, '--label', 'Nightly | export <script>'])).toBe(0);
      expect(await cli(['migrate', 'label', `user:${userB}~python-urllib`, '--label', '  Finance sync '])).toBe(0);
      await expect(cli(['migrate', 'label', 'bob', '--label', 'x'])).rejects.toThrow(/not a client id/);
      await expect(cli(['migrate', 'label', nightly])).rejects.toThrow(/one of --label TEXT and --clear/);
      await expect(cli(['migrate', 'label', nightly, '--label', 'x', '--clear'])).rejects.toThrow(/one of --label TEXT and --clear/);
      await expect(cli(['migrate', 'label', nightly, '--label', 'two\nlines'])).rejects.toThrow(/one line/);
      await expect(cli(['migrate', 'label', nightly, '--label', 'x'.repeat(201)])).rejects.toThrow(/at most 200/);
      const whole = await buildMigrationReport(gw.deps, (o) => gw.app.inject(o), { prove: false });
      const by = new Map(whole.clients.map((c) => [c.client, c]));
      expect(by.get(`${nightly}~curl`)).toMatchObject({ label: 'Nightly | export <script>', owner: 'token "nightly curl" of sdk@example.com' });
      expect(by.get(`user:${userB}~python-urllib`)).toMatchObject({ label: 'Finance sync', owner: 'python@example.com' });
      expect(by.get(`user:${userA}~node`)?.owner).toBe('sdk@example.com');
      expect(by.get(`user:${userA}~node`)?.label).toBeUndefined();
      // a label names its client wherever a client is asked for: the command line and the operator route
      const one = await buildMigrationReport(gw.deps, (o) => gw.app.inject(o), { client: 'finance SYNC', prove: false });
      expect(one.clients.map((c) => c.client)).toEqual([`user:${userB}~python-urllib`]);
      const res = await gw.get('/_gateway/migrate?prove=false&client=Finance%20sync', TEST_ENV.GATEWAY_ADMIN_TOKEN);
      expect((res.body.data as MigrationReport).clients.map((c) => [c.client, c.label, c.owner]))
        .toEqual([[`user:${userB}~python-urllib`, 'Finance sync', 'python@example.com']]);
      // Markdown and HTML: the label is text (a pipe stays in its cell, a tag is escaped)
      const md = reportMarkdown(whole);
      expect(md).toContain(`### Nightly \\| export \\<script\\> (${nightly}~curl) — `);
      expect(md).toContain('Acts as token \\"nightly curl\\" of sdk\\@example\\.com; User-Agent family curl.');
      const html = reportHtml(whole);
      expect(html).not.toContain('<script');
      const row = html.split('<tr>').find((r) => r.includes(`(${nightly}~curl)`))!;
      expect(row.match(/<td/g)).toHaveLength(9);
      expect(row).toContain(`<td>Nightly | export &lt;script&gt; (${nightly}~curl)</td><td>token &quot;nightly curl&quot; of sdk@example.com</td>`);
      // taken away
      expect(await cli(['migrate', 'label', nightly, '--clear'])).toBe(0);
      const after = await buildMigrationReport(gw.deps, (o) => gw.app.inject(o), { client: nightly, prove: false });
      expect(after.clients[0]?.label).toBeUndefined();
    } finally {
      process.env = saved;
    }
  }, 60_000);

  it('a proof names the field that differs: a title only the gateway keeps (overlay) is not what v1 answers', async () => {
    const session = await gw.deps.v1For(userA);
    const ctx = { ids: gw.deps.ids, mappings: gw.deps.mappings, timeUnit: gw.config.V1_TIMESTAMP_UNIT };
    const sample = await sampleValues(session, ctx);
    const token = await gw.login('sdk@example.com', 'sdk-password-123');
    const patched = await gw.app.inject({ method: 'PATCH', url: `/render/${String(sample.render![0]!.id)}`, headers: { authorization: `Bearer ${token}` }, payload: { title: 'only the gateway knows' } });
    expect(patched.statusCode).toBe(200);
    const shape = gw.deps.shapes.shapeOf({ method: 'GET', route: '/renders/:id', query: { fields: 'id,title' }, question: 'fields=id,title' });
    const e = equivalentOfShape(shape, gw.deps.mappings, gw.config.QUERY_LIMIT_DEFAULT);
    const proof = await prove(shape, e, userA, proofDeps(gw.deps, (o) => gw.app.inject(o as any)));
    expect(proof).toMatchObject({ result: 'differs', v1Calls: 1 });
    // the equivalent's calls read by the evaluator, and each snippet as handed out, run and read back: all name the title
    expect(proof.differences).toEqual([
      { path: 'data.title', kind: 'value' }, ...['node', 'python', 'curl'].map((l) => ({ path: `${l}: data.title`, kind: 'value' })),
    ]);
    expect(proof.snippets?.map((x) => `${x.lang} ${x.result}`)).toEqual(['node differs', 'python differs', 'curl differs']);
    // and the same shape for a field v1 does give is equal
    const other = gw.deps.shapes.shapeOf({ method: 'GET', route: '/renders/:id', query: { fields: 'id,status' }, question: 'fields=id,status' });
    expect((await prove(other, equivalentOfShape(other, gw.deps.mappings, 100), userA, proofDeps(gw.deps, (o) => gw.app.inject(o as any)))).result).toBe('equal');
    // one item of each resource, by id
    for (const route of ['/projects/:id', '/accounts/:id', '/templates/:id', '/items/templates/:id']) {
      const one = gw.deps.shapes.shapeOf({ method: 'GET', route, query: { fields: 'id,title' }, question: `${route} fields=id,title` });
      const p = await prove(one, equivalentOfShape(one, gw.deps.mappings, 100), userA, proofDeps(gw.deps, (o) => gw.app.inject(o as any)));
      expect(p, `${route}: ${p.reason ?? ''} ${JSON.stringify(p.differences)}`).toMatchObject({ result: 'equal' });
    }
  });
});
