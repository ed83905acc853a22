import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminError, addUser, importIdMap, importUsers, rebind } from '../../src/admin/operations.js';
import { JwtService } from '../../src/auth/jwt.js';
import { parseCsv } from '../../src/lib/csv.js';
import { run } from '../../src/cli/main.js';
import { CompareStore } from '../../src/store/compare.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

/** An argon2id hash as the legacy Directus system exported it (its default parameters). */
const DIRECTUS_HASH = '$argon2id$v=19$m=65536,t=3,p=4$5z0bVsux3V8XB8HIBPEfcw$GQPnIqy4lZ5mfUDMzpmEEOsK9jNODchul9aLQbK4Fe8';
const LEGACY_ID = '5c4a3b2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d';

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway({ RENDER_CREDITS: '' }); });
afterAll(async () => gw.close());

describe('operator actions', () => {
  it('adds a user only after GET /v1/me accepts the key', async () => {
    await expect(addUser(gw.deps, { email: 'x@example.com', password: 'long-enough', key: 'sk_' + 'q'.repeat(32) })).rejects.toThrow(AdminError);
    await expect(addUser(gw.deps, { email: 'x@example.com', password: 'long-enough', key: 'not-a-key' })).rejects.toThrow(/sk_ followed by 32/);
    const u = await addUser(gw.deps, { email: 'new@example.com', password: 'long-enough', key: gw.s.keys[1]!.api_key, firstName: 'N' });
    expect(u.v1UserId).toBe(gw.s.keys[1]!.user_id);
    expect(await gw.login('new@example.com', 'long-enough')).toBeTruthy();
  });

  it('imports a legacy export (CSV) keeping uuids and Directus argon2 hashes; keyless rows wait for a rebind', async () => {
    const csv = `id,email,password,first_name,last_name,role,v1_key\n${LEGACY_ID},old@example.com,"${DIRECTUS_HASH}","Old, Timer",Legacy,,\nbad,nope,,,,,\n`;
    const r = await importUsers(gw.deps, parseCsv(csv));
    expect(r).toMatchObject({ imported: 1, unbound: 1 });
    expect(r.problems).toEqual(['line 3: id must be a uuid']);
    expect((await gw.deps.users.byId(LEGACY_ID))).toMatchObject({ email: 'old@example.com', firstName: 'Old, Timer', status: 'unbound' });
    // cannot log in before a key is bound
    expect((await gw.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'old@example.com', password: 'legacy-password' } })).statusCode).toBe(401);
    await rebind(gw.deps, 'old@example.com', gw.s.keys[0]!.api_key);
    const login = await gw.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'old@example.com', password: 'legacy-password' } });
    expect(login.statusCode).toBe(200);
    const me = await gw.get('/users/me?fields=id,email', login.json().data.access_token);
    expect(me.body.data).toEqual({ id: LEGACY_ID, email: 'old@example.com' });
  });

  it('imports JSON users too', async () => {
    const r = await importUsers(gw.deps, [{ id: '6d5b4c3e-2f1a-4b0c-9d8e-7f6a5b4c3d2e', email: 'json@example.com', password: DIRECTUS_HASH, v1_key: gw.s.keys[2]!.api_key }]);
    expect(r).toMatchObject({ imported: 1, unbound: 0, problems: [] });
  });

  it('runs the command line: tokens, id map export', async () => {
    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    (process.stdout as { write: unknown }).write = (s: string) => { lines.push(String(s)); return true; };
    const env = { ...process.env };
    Object.assign(process.env, { ...TEST_ENV, V1_BASE_URL: gw.s.url, DATABASE_URL: gw.config.DATABASE_URL, LOG_LEVEL: 'silent' });
    try {
      expect(await run(['tokens', 'create', 'new@example.com', '--name', 'ci'])).toBe(0);
      const token = lines.join('').trim().split('\n').at(-1)!;
      expect((await gw.get('/users/me?fields=email', token)).body.data.email).toBe('new@example.com');
      const id = /token id (\S+)/.exec(lines.join(''))![1]!;
      const answered = (await gw.get('/projects?limit=1&fields=id', token)).body.data[0].id as string; // its pair is stored
      expect(await run(['tokens', 'revoke', id])).toBe(0);
      // the running gateway keeps tokens in memory; another process's commit reaches it on its next poll of the store
      await gw.deps.bus.sync();
      expect((await gw.get('/users/me', token)).status).toBe(401);
      lines.length = 0;
      expect(await run(['ids', 'export'])).toBe(0);
      expect(lines.join('')).toMatch(/^legacy_id,v1_id,type,source\n/);
      expect(lines.join('')).toMatch(new RegExp(`^${answered},proj_\\w+,project,derived$`, 'm'));
      expect(lines.join('')).toContain(`${LEGACY_ID},${gw.s.keys[0]!.user_id},user,imported`);
      expect(await run(['mappings', 'report'])).toBe(0);
      expect(lines.join('')).toContain('No v1 source');
    } finally {
      (process.stdout as { write: unknown }).write = write;
      process.env = env;
    }
  });

  it('refuses id pairs with bad uuids or unknown prefixes', async () => {
    expect((await importIdMap(gw.deps, [{ legacy_id: LEGACY_ID, v1_id: 'zzz_1' }])).problems[0]).toMatch(/no known v1 prefix/);
    const bad = await importIdMap(gw.deps, [{ legacy_id: 'not-a-uuid', v1_id: 'rend_1' }, { legacy_id: '', v1_id: 'proj_1' }]);
    expect(bad.imported).toBe(0);
    expect(bad.problems).toHaveLength(2);
    for (const p of bad.problems) expect(p).toMatch(/uuid/);
  });
});

describe('asymmetric access tokens', () => {
  it('signs and verifies with ES256 and refuses HS256 tokens then', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const es = await JwtService.create({ issuer: 'directus', ttlMs: 60_000, alg: 'ES256', privateKeyPem: pem });
    const t = await es.sign({ id: 'u', role: 'r', app_access: true, admin_access: false });
    expect(JSON.parse(Buffer.from(t.split('.')[0]!, 'base64url').toString()).alg).toBe('ES256');
    expect((await es.verify(t)).id).toBe('u');
    const hs = await JwtService.create({ issuer: 'directus', ttlMs: 60_000, alg: 'HS256', secret: 'x'.repeat(40) });
    await expect(es.verify(await hs.sign({ id: 'u', role: 'r', app_access: true, admin_access: false }))).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });
});

describe('comparison storage is bounded', () => {
  it('keeps at most five samples per route and field, and counts them all', async () => {
    const store = new CompareStore(gw.deps.db.kysely);
    for (let i = 0; i < 8; i++) {
      await store.record({ route: 'GET /x', request: `GET /x?${i}`, differences: [{ path: 'data.a', kind: 'value', legacy: i, translated: -i }], noise: new Set(), legacyMs: 10, translatedMs: 5 });
    }
    const r = (await store.report()).routes.find((x) => x.route === 'GET /x')!;
    expect(r).toMatchObject({ total: 8, differing: 8, legacyMsAvg: 10, translatedMsAvg: 5 });
    expect(r.fields[0]).toMatchObject({ path: 'data.a', count: 8 });
    expect(r.fields[0]!.samples).toHaveLength(5);
  });
});

describe('static tokens of the legacy system', () => {
  it('imports a directus_users export (id, email, token): the tokens then work; repeats and bad rows are reported', async () => {
    const { importTokens } = await import('../../src/admin/operations.js');
    const u = await gw.deps.users.byEmail('new@example.com');
    const legacyToken = 'legacy-static-token-0123456789abcdef';
    const csv = `id,email,token\n${u!.id},,${legacyToken}\n,nobody@example.com,another-token-0123456789\n,new@example.com,short\n,new@example.com,\n`;
    const r = await importTokens(gw.deps, parseCsv(csv));
    expect(r.imported).toBe(1);
    expect(r.problems).toEqual(['row 3: no gateway user nobody@example.com; import the users first', 'row 4: the token is shorter than 16 characters']);
    expect((await gw.get('/users/me?fields=email', legacyToken)).body.data.email).toBe('new@example.com');
    expect((await importTokens(gw.deps, parseCsv(csv))).known).toBe(1);
  });
});

describe('users import at scale', () => {
  const row = (i: number, extra = '') => `${`00000000-0000-4000-9000-${String(i).padStart(12, '0')}`},bulk${i}@example.com,"${DIRECTUS_HASH}",F${i},L${i},,${extra}`;
  it('checks each distinct key once, names shifted columns with their line, and --check writes nothing', async () => {
    const keyA = gw.s.keys[1]!.api_key;
    const keyB = gw.s.keys[2]!.api_key;
    const lines = ['id,email,password,first_name,last_name,role,v1_key'];
    for (let i = 0; i < 300; i++) lines.push(row(i, i % 2 ? keyA : keyB));
    lines.push(`00000000-0000-4000-9000-999999999999,shifted@example.com,${DIRECTUS_HASH},F,L,,`); // unquoted hash: its commas shift the columns
    const csv = `${lines.join('\n')}\n`;
    await fetch(`${gw.s.url}/_sim/stats/reset`, { method: 'POST' });
    const checked = await importUsers(gw.deps, parseCsv(csv), { check: true });
    expect(checked.checked).toBe(true);
    expect(checked.problems).toEqual([expect.stringMatching(/^line 302: 9 columns where the header has 7 .*quote them/)]);
    expect(await gw.deps.users.byEmail('bulk1@example.com')).toBeUndefined();
    const stats = (await (await fetch(`${gw.s.url}/_sim/stats`)).json()) as { requests: Record<string, number> };
    expect(stats.requests['GET /v1/me']).toBe(2); // two distinct keys, 300 rows
    const seen: number[] = [];
    const r = await importUsers(gw.deps, parseCsv(csv), { onProgress: (done) => seen.push(done) });
    expect(r).toMatchObject({ imported: 300, unbound: 0 });
    expect(seen.at(-1)).toBe(300);
    expect((await gw.deps.users.byEmail('bulk1@example.com'))).toMatchObject({ v1UserId: gw.s.keys[1]!.user_id, status: 'active' });
    // a re-run: reported row by row, or skipped, or updated
    const again = await importUsers(gw.deps, parseCsv(`${lines.slice(0, 3).join('\n')}\n`));
    expect(again.problems).toEqual([expect.stringMatching(/^line 2: bulk0@example.com already exists/), expect.stringMatching(/^line 3: /)]);
    expect((await importUsers(gw.deps, parseCsv(`${lines.slice(0, 3).join('\n')}\n`), { existing: 'skip' })).skipped).toBe(2);
    const csvUpdate = `id,email,password,first_name,last_name,role\n00000000-0000-4000-9000-000000000000,bulk0@example.com,"${DIRECTUS_HASH}",Renamed,L0,\n`;
    const updated = await importUsers(gw.deps, parseCsv(csvUpdate), { existing: 'update' });
    expect(updated.problems).toEqual([]);
    expect(updated.updated).toBe(1);
    expect((await gw.deps.users.byEmail('bulk0@example.com'))!.firstName).toBe('Renamed');
  });
  it('hashes plaintext passwords (then they log in)', async () => {
    const r = await importUsers(gw.deps, parseCsv(`id,email,password,v1_key\n00000000-0000-4000-9000-888888888888,plain@example.com,a-plain-password,${gw.s.keys[1]!.api_key}\n`));
    expect(r.imported).toBe(1);
    expect((await gw.app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'plain@example.com', password: 'a-plain-password' } })).statusCode).toBe(200);
  });
});
