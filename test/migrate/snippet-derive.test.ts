import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import type { StepArgsOf } from '../../src/migrate/equivalent-model.js';
import { JQ_DERIVE, jqDerive, jsDerive, pyDerive } from '../../src/migrate/snippet-derive.js';
import { envName } from '../../src/migrate/snippet-curl.js';
import { uuidV5 } from '../../src/lib/uuid.js';
import { derivedUuid, idNamespace } from '../../src/translate/ids.js';
import { toLegacyOutput } from '../../src/translate/outputs.js';
import { PROCESS_NAMESPACE, slugify, textToHtml } from '../../src/translate/records.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'derive-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const m = loadMappings(join(process.cwd(), 'mappings'));

/** A derive step's code run in each language over `items` (the `projects` call's items beside them): what each prints. */
async function derived(
  a: StepArgsOf<'derive'>, items: unknown[], projects: unknown[], params: Record<string, unknown> = {},
): Promise<Record<'node' | 'python' | 'jq', unknown[]>> {
  writeFileSync(join(dir, 'items.json'), JSON.stringify(items));
  writeFileSync(join(dir, 'projects.json'), JSON.stringify(projects));
  writeFileSync(join(dir, 'step.mjs'), `const params = ${JSON.stringify(params)};\nconst r = { projects: ${JSON.stringify(projects)} };\n` +
    `let out = ${JSON.stringify(items)};\nconst val = (x, p) => p.split('.').reduce((o, k) => (o == null ? o : o[k]), x);\n${jsDerive(a)}\n` +
    'console.log(JSON.stringify(out));\n');
  // (the Python snippet's own prelude: its imports and its iso())
  const iso = '    def iso(ms):\n        from datetime import datetime as _dt, timezone as _tz\n' +
    '        return _dt.fromtimestamp(int(ms) // 1000, _tz.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (int(ms) % 1000)\n';
  const val = '    def val(x, path):\n        for k in path.split("."):\n            x = x.get(k) if isinstance(x, dict) else None\n        return x\n';
  writeFileSync(join(dir, 'step.py'), `import json, unicodedata\ndef f(r, out, params):\n${iso}${val}${pyDerive(a)}\n    return out\n` +
    `print(json.dumps(f({"projects": json.loads(open("projects.json").read())}, json.loads(open("items.json").read()), ${JSON.stringify(params)})))\n`);
  // (process_id's SHA-1 comes from the script's sh lines: the jq part is given the digests as they compute them)
  const { createHash } = await import('node:crypto');
  const ns = Buffer.from(('namespace' in a ? a.namespace : PROCESS_NAMESPACE).replace(/-/g, ''), 'hex');
  const of = (x: unknown): unknown => ('of' in a && a.of ? a.of.path.split('.').reduce((o: any, k) => o?.[k], x) : (x as { id: string }).id);
  const digests = Object.fromEntries(items.map(of).filter((id): id is string => typeof id === 'string')
    .map((id) => [id, createHash('sha1').update(Buffer.concat([ns, Buffer.from(id)])).digest('hex')]));
  writeFileSync(join(dir, 'process_ids.json'), JSON.stringify(digests));
  // (the curl script passes each parameter in the environment: an object as JSON)
  const env = { ...process.env, ...Object.fromEntries(Object.entries(params).map(([k, v]) => [envName(k), JSON.stringify(v)])) };
  const file = 'of' in a && a.of ? a.of.as : 'legacy_uuid';
  const [node, python, jq] = await Promise.all([
    run('node', ['step.mjs'], { cwd: dir }),
    run('python3', ['step.py'], { cwd: dir }),
    run('jq', ['-c', '--slurpfile', 'projects', 'projects.json', '--slurpfile', 'process_id', 'process_ids.json', '--slurpfile', file,
      'process_ids.json', `${JQ_DERIVE}${jqDerive(a)}`, 'items.json'], { cwd: dir, env }),
  ]);
  return { node: JSON.parse(node.stdout), python: JSON.parse(python.stdout), jq: JSON.parse(jq.stdout) };
}

/** A small deterministic generator (the same cases every run). */
function* random(seed: number): Generator<number> {
  let x = seed;
  for (;;) { x = (x * 1_103_515_245 + 12_345) % 2_147_483_648; yield x / 2_147_483_648; }
}

describe('a render\'s derived fields written out in node, python and jq', () => {
  it('output: every language gives what the gateway gives, over generated variants meeting every rule (named, by size, stills, ignored, none, no still)', async () => {
    const names = ['master', '1080p', 'hd', 'high', '720p', 'medium', '360p', '480p', 'sd', 'low', '2160p', '1440p', '540p', '240p',
      'still', 'poster', 'thumbnail', 'gif_preview', 'webm-odd'];
    const r = random(39);
    const next = () => r.next().value as number;
    const projects = [{ id: 'proj_a', thumbnail_url: 'https://cdn/a.jpg' }, { id: 'proj_b', thumbnail_url: null }];
    const items = Array.from({ length: 300 }, (_, i) => {
      const output = i % 10 === 0 ? null : i % 10 === 5 ? {} : Object.fromEntries(names.filter(() => next() < 0.35).map((n) => [n, `https://cdn/${i}/${n}`]));
      // (an output on a render that is not complete is none: the gateway answers null — a review found the snippets did not)
      return { id: `rend_${i}`, status: i % 7 === 3 ? 'failed' : 'complete', project: { id: i % 3 === 0 ? 'proj_b' : i % 3 === 1 ? 'proj_a' : 'proj_gone' }, output };
    });
    const thumb = (p: string) => projects.find((x) => x.id === p)?.thumbnail_url ?? null;
    const want = items.map((x) => ({ ...x, output: x.status === 'complete' ? toLegacyOutput(x.output ?? undefined, m.outputs, thumb(x.project.id)) : null }));
    expect(items.some((x) => x.status === 'failed' && x.output && Object.keys(x.output).length > 0)).toBe(true);
    // the rules are all met: a still and none, a size-order fill, the thumbnail both ways, an empty output
    const outs = want.map((x) => x.output).filter((o) => o !== null);
    expect(outs.some((o) => o.poster === 'https://cdn/a.jpg') && outs.some((o) => o.poster === null) && outs.some((o) => o.poster?.endsWith('/still'))).toBe(true);
    expect(outs.some((o) => o.high?.endsWith('/2160p') || o.high?.endsWith('/1440p'))).toBe(true);
    expect(outs.some((o) => Object.values(o).every((v) => v === null))).toBe(true);
    const { master, byName, sizeOrder, stills, ignored } = m.outputs;
    const got = await derived({ op: 'derive', field: 'output', rule: { master, byName, sizeOrder, stills, ignored }, thumbnails: 'projects' }, items, projects);
    for (const [lang, data] of Object.entries(got)) expect(data, lang).toEqual(want);
  });

  it('process_id, a legacy uuid and download_ready: every language gives what the gateway gives', async () => {
    const items = Array.from({ length: 50 }, (_, i) => ({ id: `rend_${i.toString(36)}x${'abc'.repeat(i % 4)}`, status: i % 3 ? 'complete' : 'failed',
      output: i % 5 === 0 ? null : i % 2 ? { master: 'https://cdn/m' } : { '720p': 'https://cdn/7' } }));
    const ids = await derived({ op: 'derive', field: 'process_id', namespace: PROCESS_NAMESPACE }, items, []);
    for (const [lang, data] of Object.entries(ids)) expect(data, lang).toEqual(items.map((x) => ({ ...x, process_id: uuidV5(x.id, PROCESS_NAMESPACE) })));
    const uuids = await derived({ op: 'derive', field: 'legacy_uuid', namespace: idNamespace('account') }, items, []);
    for (const [lang, data] of Object.entries(uuids)) expect(data, lang).toEqual(items.map((x) => ({ ...x, legacy_uuid: derivedUuid('account', x.id) })));
    // an imported legacy uuid (the ids export's: the `account_uuids` parameter) wins over the derived one; a related
    // item's (`of`: its team's) too, a missing one null (the sixth held-out check: gateway users' uuids are imported)
    const imported = { [items[1]!.id]: '00000000-0000-4000-8000-00000000000a', [items[4]!.id]: 'ffffffff-0000-4000-8000-00000000000b' };
    const own = await derived({ op: 'derive', field: 'legacy_uuid', namespace: idNamespace('account') }, items, [], { account_uuids: imported });
    for (const [lang, data] of Object.entries(own)) {
      expect(data, lang).toEqual(items.map((x) => ({ ...x, legacy_uuid: imported[x.id] ?? derivedUuid('account', x.id) })));
    }
    const teams = items.map((x, i) => ({ ...x, project: i % 3 === 2 ? null : { id: `proj_${i}`, team: items[(i + 1) % items.length]!.id } }));
    const related = await derived({ op: 'derive', field: 'legacy_uuid', namespace: idNamespace('account'), of: { path: 'project.team', as: 'account_uuid' } },
      teams, [], { account_uuids: imported });
    const want0 = teams.map((x) => ({ ...x, account_uuid: x.project ? imported[x.project.team] ?? derivedUuid('account', x.project.team) : null }));
    expect(want0.filter((x) => x.account_uuid?.startsWith('00000000') || x.account_uuid?.startsWith('ffffffff')).length).toBeGreaterThan(0);
    for (const [lang, data] of Object.entries(related)) expect(data, lang).toEqual(want0);
    const ready = await derived({ op: 'derive', field: 'download_ready', master: m.outputs.master }, items, []);
    const want = items.map((x) => ({ ...x, download_ready: x.status === 'complete' && typeof x.output?.master === 'string' }));
    expect(new Set(want.map((x) => x.download_ready))).toEqual(new Set([true, false]));
    for (const [lang, data] of Object.entries(ready)) expect(data, lang).toEqual(want);
  });

  it('a template\'s slug, description, date_created and poster: every language gives what the gateway gives (accents, spelled-out letters, HTML, no project)', async () => {
    const names = ['Holiday Promo', 'Café crème brûlée', 'Ærøskøbing — Straße', 'Łódź / Đakovo þing', '  --Spaces & *stars*--  ', '',
      'ÀÉÎÕÜ ÇÑ Ÿ', 'Ğİ ĳ ŉ ſ', 'Über 100 % <b>"quoted"</b>', 'x', 'Nº 5 — Top² ½ µ'];
    const texts = [null, '', 'one line', 'a & b < c > d "e" \'f\'', 'first\nsecond', 'para one\n\npara two\n\n\nthree\nlines', '<b>bold</b>'];
    const projects = [{ id: 'proj_a', created_at: 1_760_000_000, thumbnail_url: 'https://cdn/a.jpg' }, { id: 'proj_b', created_at: 1_760_000_123_456, thumbnail_url: null }];
    const items = names.flatMap((name, i) => texts.map((description, j) => ({
      id: `tpl_${i}_${j}`, name, description, project_id: (i + j) % 3 === 0 ? 'proj_a' : (i + j) % 3 === 1 ? 'proj_b' : 'proj_gone',
    })));
    const project = (id: string) => projects.find((p) => p.id === id);
    const iso = (t: number | undefined) => (t === undefined ? null : new Date(t < 1e11 ? t * 1000 : t).toISOString());
    const cases: [StepArgsOf<'derive'>, (x: (typeof items)[number]) => unknown][] = [
      [{ op: 'derive', field: 'slug' }, (x) => slugify(x.name)],
      [{ op: 'derive', field: 'description' }, (x) => textToHtml(x.description)],
      [{ op: 'derive', field: 'date_created', from: 'projects' }, (x) => iso(project(x.project_id)?.created_at)],
      [{ op: 'derive', field: 'poster', from: 'projects' }, (x) => project(x.project_id)?.thumbnail_url ?? null],
    ];
    // the cases meet what they test: slugs with accents folded and letters spelled out, HTML escaped and in paragraphs
    expect(items.map((x) => slugify(x.name))).toEqual(expect.arrayContaining(['cafe-creme-brulee', 'aeroskobing-strasse', 'lodz-dakovo-thing', '']));
    expect(textToHtml('para one\n\npara two')).toBe('<p>para one</p><p>para two</p>');
    for (const [a, value] of cases) {
      const got = await derived(a, items, projects);
      const want = items.map((x) => ({ ...x, [a.field]: value(x) }));
      for (const [lang, data] of Object.entries(got)) expect(data, `${a.field} ${lang}`).toEqual(want);
    }
  });
});
