/**
 * npm run capture:directus:clients — asks a real Directus 10.10 the requests of test/fixtures/directus/clients-cases.json
 * (reads that fail, and writes) over the same data the gateway serves (the test simulator's world, seed 1, tiny), as a
 * non-admin role shaped like the legacy users' and created here through Directus's API as the admin (read the four
 * collections; create renders with project, account, data, title; update render and project titles and account names,
 * as mappings/permissions.json says; no delete), and writes what Directus answered to
 * test/fixtures/directus/clients-answers.json. The tests hold the gateway to those answers (docs/clients.md lists them).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { hashPassword } from '../src/auth/passwords.js';
import { loadConfig } from '../src/config/schema.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/log/logger.js';
import { createSimulator } from '../src/sim/server.js';
import { DEFAULT_ROLE } from '../src/store/users.js';
import { derivedUuid } from '../src/translate/ids.js';
import { loadLegacyData, startDirectus, type Directus } from './directus.js';

const CASES = 'test/fixtures/directus/clients-cases.json';
const ANSWERS = 'test/fixtures/directus/clients-answers.json';
const PERMISSIONS = 'mappings/permissions.json';
interface Case { name: string; method: string; path: string; body?: unknown; raw?: string }
const cases = JSON.parse(readFileSync(CASES, 'utf8')) as Case[];
const permissions = JSON.parse(readFileSync(PERMISSIONS, 'utf8')) as {
  collections: Record<string, { read: boolean; create: string[]; update: string[]; delete: boolean }>;
};

/** The placeholders of the cases: a project with credits that the user reaches, two of its renders, a template. */
function placeholders(sim: ReturnType<typeof createSimulator>): Record<string, string> {
  const reach = new Set(sim.world.listKeys()[0]!.teams.map((t) => t.id));
  const projects = [...sim.world.projects.values()]
    .filter((p) => reach.has(p.teamId) && sim.world.teams.get(p.teamId)!.credits > 0 && p.templates.length > 0)
    .sort((a, b) => derivedUuid('project', a.id).localeCompare(derivedUuid('project', b.id)));
  const project = projects[0]!;
  const renders = [...sim.world.renders.values()].filter((r) => r.projectId === project.id).map((r) => derivedUuid('render', r.id)).sort();
  return {
    project: derivedUuid('project', project.id), account: derivedUuid('account', project.teamId), render: renders[0]!, render2: renders[1]!,
    template: derivedUuid('template', project.templates[0]!.id), missing: '0b0e6f55-7d6e-4a4e-9c1e-000000000404',
  };
}

/** The case with its placeholders filled in. */
function fill<T>(v: T, values: Record<string, string>): T {
  return JSON.parse(JSON.stringify(v).replace(/\{\{(\w+)\}\}/g, (_, k: string) => values[k] ?? `{{${k}}}`)) as T;
}

async function call(base: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const r = await fetch(base + path, {
    method, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  let parsed: unknown = text;
  try { parsed = text ? JSON.parse(text) : null; } catch { /* kept as text */ }
  return { status: r.status, body: parsed };
}

/** A role shaped like the legacy users' (mappings/permissions.json), and a user of it; answers the user's token. */
async function legacyRole(dx: Directus): Promise<string> {
  const must = async (method: string, path: string, body: unknown) => {
    const r = await call(dx.base, dx.token, method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body as { data: { id: string } };
  };
  // the legacy collections' keys are made by Directus on create, as the legacy service's were
  for (const c of Object.keys(permissions.collections)) await must('PATCH', `/fields/${c}/id`, { meta: { special: ['uuid'] } });
  const role = (await must('POST', '/roles', { name: 'legacy', admin_access: false, app_access: false })).data.id;
  for (const [collection, p] of Object.entries(permissions.collections)) {
    const add = (action: string, fields: string[]) => must('POST', '/permissions', { role, collection, action, fields, permissions: {}, validation: {} });
    if (p.read) await add('read', ['*']);
    if (p.create.length > 0) await add('create', p.create);
    if (p.update.length > 0) await add('update', p.update);
    if (p.delete) await add('delete', ['*']);
  }
  await must('POST', '/users', { email: 'legacy@example.com', password: 'legacy-password-123', role });
  const login = await call(dx.base, '', 'POST', '/auth/login', { email: 'legacy@example.com', password: 'legacy-password-123' });
  return (login.body as { data: { access_token: string } }).data.access_token;
}

const sim = createSimulator({ seed: 1, scale: 'tiny', clock: 'manual' });
const simUrl = await sim.listen(0);
const person = sim.world.listKeys()[0]!;
const config = loadConfig({
  V1_BASE_URL: simUrl, DATABASE_URL: join(mkdtempSync(join(tmpdir(), 'capture-')), 'g.db'), ENCRYPTION_KEY: '55'.repeat(32),
  JWT_SECRET: 'capture-secret-capture-secret-capture-0', LOG_LEVEL: 'silent', LOGIN_STALL_MS: '0',
});
const deps = await createDeps(config, createLogger('silent'));
const u = await deps.users.create({
  email: 'capture@example.com', passwordHash: await hashPassword('capture-password'), role: DEFAULT_ROLE, v1Key: person.api_key, v1UserId: person.user_id,
});
await deps.idMap.importPairs([{ type: 'user', uuid: u.id, v1Id: person.user_id }]);
await deps.ids.load();
const app = await buildApp(deps);
const gwBase = await app.listen({ port: 0, host: '127.0.0.1' });
const token = ((await (await fetch(`${gwBase}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'capture@example.com', password: 'capture-password' }) })).json()) as { data: { access_token: string } }).data.access_token;
const dx = await startDirectus((s) => process.stderr.write(`${s}\n`));
try {
  process.stderr.write(`loaded into Directus: ${JSON.stringify(await loadLegacyData(dx, { base: gwBase, token }))}\n`);
  const roleToken = await legacyRole(dx);
  const values = placeholders(sim);
  const answers: Record<string, unknown> = {};
  for (const c of cases) {
    const f = fill(c, values);
    const res = await call(dx.base, roleToken, f.method, f.path, f.raw ?? f.body);
    answers[c.name] = { method: f.method, path: f.path, status: res.status, body: res.body };
  }
  writeFileSync(ANSWERS, `${JSON.stringify({ capturedFrom: 'Directus 10.10.0 on PostgreSQL 15, as a non-admin role shaped like the legacy users\'',
    at: new Date().toISOString(), values, answers }, null, 2)}\n`);
  process.stderr.write(`wrote ${Object.keys(answers).length} answers to ${ANSWERS}\n`);
} finally {
  await dx.stop();
  await app.close();
  await deps.close();
  await sim.close();
}
process.exit(0);
