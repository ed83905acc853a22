#!/usr/bin/env node
// Asks a real Directus 10.10 (the oracle: ../shared/tools/directus-oracle/up.sh) what its schema routes, /server/info and
// SEARCH bodies answer a role with app access, over the four legacy collections created with the types of
// mappings/resources.json, and writes test/fixtures/directus/schema-answers.json (the schema routes' test holds the
// gateway to it). Re-creates the collections; run against a scratch Directus only.
// usage: node scripts/capture-directus-schema.mjs [out.json]   (DX=http://127.0.0.1:8056)
import { readFileSync, writeFileSync } from 'node:fs';
const DX = process.env.DX ?? 'http://127.0.0.1:8056';
async function call(token, method, path, body) {
  const r = await fetch(DX + path, { method, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body !== undefined ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined });
  const text = await r.text(); let json; try { json = JSON.parse(text); } catch {}
  return { status: r.status, body: json };
}
const login = async (e, p) => (await call(null, 'POST', '/auth/login', { email: e, password: p }));
const admin = (await login('admin@example.com', 'adminpass123')).body.data.access_token;
const res = JSON.parse(readFileSync('mappings/resources.json', 'utf8'));
const cols = Object.entries(res).filter(([k, r]) => !k.startsWith('$') && !r.collection.startsWith('directus_'));
// the many sides first
for (const c of ['renders', 'templates', 'projects', 'accounts']) await call(admin, 'DELETE', `/collections/${c}`);
const byKey = Object.fromEntries(cols.map(([k, r]) => [k, r.collection]));
for (const [, r] of cols) {
  const x = await call(admin, 'POST', '/collections', { collection: r.collection, meta: {}, schema: {}, fields: [{ field: 'id', type: 'uuid', meta: { hidden: true, readonly: true, interface: 'input', special: ['uuid'] }, schema: { is_primary_key: true, length: 36, has_auto_increment: false } }] });
  if (x.status >= 300) console.log('col', JSON.stringify(x.body));
  for (const [f, d] of Object.entries(r.fields)) {
    if (f === 'id' || d.type === 'alias') continue;
    const y = await call(admin, 'POST', `/fields/${r.collection}`, { field: f, type: d.type, meta: {}, schema: {} });
    if (y.status >= 300) console.log('field', f, JSON.stringify(y.body));
  }
}
for (const [, r] of cols) for (const [f, d] of Object.entries(r.fields)) {
  if (d.relation?.kind === 'm2o' && byKey[d.relation.resource]) {
    const one = byKey[d.relation.resource];
    const back = Object.entries(res[d.relation.resource].fields).find(([, g]) => g.relation?.kind === 'o2m' && byKey[g.relation.resource] === r.collection);
    if (back) { const z = await call(admin, 'POST', `/fields/${one}`, { field: back[0], type: 'alias', meta: { special: ['o2m'], interface: 'list-o2m' } }); if (z.status >= 300) console.log('alias', JSON.stringify(z.body)); }
    const w = await call(admin, 'POST', '/relations', { collection: r.collection, field: f, related_collection: one, meta: back ? { one_field: back[0] } : {}, schema: { on_delete: 'SET NULL' } });
    if (w.status >= 300) console.log('rel', JSON.stringify(w.body));
  }
}
// a role like the legacy users': app access, read the collections
let role = (await call(admin, 'GET', '/roles?filter[name][_eq]=legacy')).body.data[0];
if (!role) role = (await call(admin, 'POST', '/roles', { name: 'legacy', app_access: true, admin_access: false })).body.data;
for (const [, r] of cols) await call(admin, 'POST', '/permissions', { role: role.id, collection: r.collection, action: 'read', fields: ['*'], permissions: {} });
await call(admin, 'POST', '/users', { email: 'legacy@example.com', password: 'legacypass123', role: role.id });
const t = (await login('legacy@example.com', 'legacypass123')).body.data.access_token;
const out = { $comment: 'What a real Directus 10.10.0 on PostgreSQL 15 answered a role with app access that reads the four legacy collections, created through its API with the types of mappings/resources.json (uuid primary keys; the many-to-one fields with their relations, SET NULL; the one-to-many aliases). Captured by scripts/capture-directus-schema.mjs. Only the legacy collections are kept (Directus also lists the system collections such a role reads).' };
const paths = ['/collections/renders', '/collections/nope', '/fields/nope', '/fields/renders/nope', '/relations/nope', '/collections/directus_users'];
for (const c of ['accounts', 'projects', 'renders', 'templates']) paths.push(`/fields/${c}`, `/relations/${c}`);
paths.push('/fields/renders/title', '/server/info', '/websocket');
for (const p of paths) { const r = await call(t, 'GET', p); out[`GET ${p}`] = p === '/collections/directus_users' ? { status: r.status } : r; }
const legacy = (x) => ['accounts', 'projects', 'renders', 'templates'].includes(x.collection);
const all = await call(t, 'GET', '/collections'); out['GET /collections'] = { status: all.status, body: { data: all.body.data.filter(legacy) } };
const rel = await call(t, 'GET', '/relations'); out['GET /relations'] = { status: rel.status, body: { data: rel.body.data.filter(legacy) } };
out['GET /server/info (no token)'] = await call(null, 'GET', '/server/info');
out['GET /collections (no token)'] = await call(null, 'GET', '/collections');
for (const [name, body] of Object.entries({ 'a body that is an array': [1], 'an unknown key': { foo: 1 }, 'keys not an array': { keys: 'x' }, 'a key that is no uuid': { keys: ['nope'] }, 'query not an object': { query: 'x' } }))
  out[`SEARCH /items/renders: ${name}`] = { request: body, ...(await call(t, 'SEARCH', '/items/renders', body)) };
writeFileSync(process.argv[2] ?? 'test/fixtures/directus/schema-answers.json', JSON.stringify(out, null, 2) + '\n');
