#!/usr/bin/env node
// Asks a real Directus 10.10 on PostgreSQL (the oracle: ../shared/tools/directus-oracle/up.sh) which titles each text
// operator and `search` match — accents, ß and ẞ, Turkish İ and ı, Greek sigma, the Kelvin sign, ǅ, emoji, LIKE's `%`,
// `_` and `\` in a value — over a scratch collection `texts`, and writes test/fixtures/directus/text-answers.json (the
// text operators' test holds the record path and the replica's columns to it). Re-creates `texts`; run on a scratch
// Directus only.   usage: node scripts/capture-directus-text.mjs [out.json]   (DX=http://127.0.0.1:8056)
import { writeFileSync } from 'node:fs';
const DX = process.env.DX ?? 'http://127.0.0.1:8056';
const out = process.argv[2] ?? 'test/fixtures/directus/text-answers.json';
const login = await (await fetch(`${DX}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'admin@example.com', password: 'adminpass123' }) })).json();
const headers = { authorization: `Bearer ${login.data.access_token}`, 'content-type': 'application/json' };
const call = async (method, path, body) => {
  const r = await fetch(`${DX}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await r.text();
  try { return { status: r.status, body: JSON.parse(text) }; } catch { return { status: r.status, body: text }; }
};
const TITLES = [null, '', 'a', 'A', 'alpha', 'Alpha', 'ALPHA', 'beta', 'Beta ß', 'ÉTÉ', 'été', 'ÿ', 'Ÿ', 'İstanbul', 'istanbul', 'ıi', 'ΣΑΣ', 'σας',
  '\u212aelvin', 'kelvin', 'x😀y', '😀', 'a-b a', 'aaa', 'ab', 'ba', 'render_1', 'render 1', '100%', '1000', 'ẞ straße', 'ǅ', 'ﬁ', 'back\\slash',
  'a%b', 'ΑΣ Β', 'dot.star*', '(x)[y]'];
const VALUES = ['a', 'A', 'alpha', 'ALPHA', 'lph', 'ha', 'al', 'ß', 'SS', 'é', 'É', 'ÿ', 'Ÿ', 'i̇', 'İ', 'ı', 'i', 'I', 'σ', 'Σ', 'ς', 'k', 'K',
  '\u212a', '😀', 'x😀', ' a', 'Beta ß', 'été', '_', '%', 'r_nder', '100%', 'ẞ', 'ǆ', 'ǅ', 'ﬁ', 'FI', '\\', '\\\\', 'k\\s', 'a\\%b', 'a\\_',
  '_😀_', 'ΑΣ', 'ας β', '__', '.', 't*', '(x)', '[y]', '\\a'];
const OPS = ['_contains', '_ncontains', '_icontains', '_starts_with', '_nstarts_with', '_istarts_with', '_nistarts_with', '_ends_with', '_nends_with',
  '_iends_with', '_niends_with', '_eq', '_neq'];
await call('DELETE', '/collections/texts');
const made = await call('POST', '/collections', { collection: 'texts', schema: {}, meta: {}, fields: [
  { field: 'id', type: 'integer', schema: { is_primary_key: true, has_auto_increment: true }, meta: { hidden: true } },
  { field: 'title', type: 'string', schema: {}, meta: {} },
] });
if (made.status >= 300) throw new Error(`texts: ${JSON.stringify(made.body)}`);
const rows = await call('POST', '/items/texts', TITLES.map((title) => ({ title })));
if (rows.status >= 300) throw new Error(`rows: ${JSON.stringify(rows.body)}`);
const all = (await call('GET', '/items/texts?limit=-1&fields=id,title&sort=id')).body.data;
const index = (data) => data.map((x) => all.findIndex((a) => a.id === x.id)).sort((a, b) => a - b);
const answers = [];
const ask = async (kind, op, value, query) => {
  const r = await call('GET', `/items/texts?limit=-1&fields=id&sort=id&${query}`);
  answers.push(r.status === 200 ? { kind, op, value, rows: index(r.body.data) } : { kind, op, value, status: r.status });
};
for (const op of OPS) for (const v of VALUES) await ask('filter', op, v, `filter=${encodeURIComponent(JSON.stringify({ title: { [op]: v } }))}`);
for (const v of VALUES) await ask('search', 'search', v, `search=${encodeURIComponent(v)}`);
const info = (await call('GET', '/server/info')).body?.data ?? {};
writeFileSync(out, `${JSON.stringify({
  how: 'scripts/capture-directus-text.mjs against the oracle (../shared/tools/directus-oracle): Directus on PostgreSQL 15, database locale C.UTF-8',
  directus: info.directus?.version ?? '10.10', recorded: new Date().toISOString().slice(0, 10), titles: all.map((x) => x.title), answers,
}, null, 1)}\n`);
console.log(`${answers.length} answers for ${all.length} titles → ${out}`);
