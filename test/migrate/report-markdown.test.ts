import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMappings } from '../../src/config/mappings.js';
import { ShapeRecorder } from '../../src/migrate/recorder.js';
import { reportHtml, reportMarkdown } from '../../src/migrate/render.js';
import { migrationReport, type MigrationReport } from '../../src/migrate/report.js';
import { ClientShapeStore } from '../../src/store/client-shapes.js';
import { openDb, type Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrations.js';

/**
 * Names a client sends reach the Markdown report (body keys, unknown parameter and field names): they are text there,
 * never Markdown or HTML of their own, in the Markdown and in the HTML report made from it.
 */
const m = loadMappings('mappings');
const NAMES = [
  'x\n<details><summary><img src=x onerror=alert(1)></summary>',
  '<script>alert(2)</script>',
  '[click](javascript:alert(3))',
  '![t](http://evil.example/t.png)',
  'a`<b onclick=alert(4)>`c',
  '\n# Injected heading\n',
  '\n```\n<img src=y onerror=alert(5)>\n```\n',
  '**bold** _em_ | col |',
  'https://evil.example/autolink',
];
let db: Db;
let report: MigrationReport;

beforeAll(async () => {
  db = await openDb(join(mkdtempSync(join(tmpdir(), 'md-')), 'store.db'));
  await migrate(db.kysely);
  const store = new ClientShapeStore(db.kysely);
  const r = new ShapeRecorder(store, { schemas: m.schemas, limitDefault: 100, perClient: 200, retentionMs: 86_400_000, flushEveryMs: 0 });
  const base = { client: 'user:u-1~curl', userId: 'u-1', ms: 1, v1Calls: 0 };
  for (const [i, name] of NAMES.entries()) {
    r.note({ ...base, method: 'POST', route: '/renders', question: `${i}`, query: {}, bodyKeys: [name], status: 400 });
    r.note({ ...base, method: 'PATCH', route: '/render/:id', question: `${i}`, query: {}, bodyKeys: [name, 'title'], status: 200 });
    r.note({ ...base, method: 'SEARCH', route: '/items/renders', question: `p${i}`, query: { [name]: 1 }, status: 400 });
    r.note({ ...base, method: 'SEARCH', route: '/items/renders', question: `f${i}`, query: { fields: [name] }, status: 400 });
  }
  await r.flush();
  report = await migrationReport(store, null, { prove: false, now: 0, retentionDays: 30, shapesPerClient: 200, limitDefault: 100, mappings: m });
});
afterAll(async () => db.close());

/** The Markdown outside its fenced code blocks. */
function prose(md: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of md.split('\n')) {
    if (line.startsWith('```')) { fenced = !fenced; continue; }
    if (!fenced) out.push(line);
  }
  return out;
}

describe('client names in the migration report', () => {
  it('are text in the Markdown: no raw HTML, link, image, heading, fence or table cell of theirs', () => {
    const md = reportMarkdown(report);
    const lines = prose(md);
    expect(lines.filter((l) => l.startsWith('<')).every((l) => /^<details><summary>(Node|Python|curl)<\/summary>$|^<\/details>$/.test(l)), md)
      .toBe(true);
    expect(lines.filter((l) => l.startsWith('#')).every((l) => /^#+ (Migration report|What every|Clients|user:u-1~curl|`)/.test(l))).toBe(true);
    expect(md.split('\n').filter((l) => l.startsWith('```')).length % 2).toBe(0);
    for (const l of lines.filter((x) => !/^<details><summary>(Node|Python|curl)<\/summary>$/.test(x))) {
      // outside code spans, no unescaped markup character from a name
      const text = l.replace(/`[^`\n]*`/g, '');
      expect(text, l).not.toMatch(/(?<!\\)<(img|script|b |\/?summary)|(?<!\\)\]\((?!\s)|(?<!\\)!\[|onerror=alert\(5/);
    }
    // (inside a code span a name is shown as it is: Markdown reads no HTML there)
    expect(md).toContain('#### `SEARCH /items/renders fields=<script>alert(2)</script>`');
  });

  it('are text in the HTML report: no element or attribute of theirs, and no stray escapes', () => {
    const html = reportHtml(report);
    expect(html).not.toMatch(/<(img|script|a |b )/i);
    expect(html).not.toMatch(/<h1>Injected/);
    expect(html).toContain('&lt;script&gt;alert(2)&lt;/script&gt;');
    expect(html).not.toMatch(/\\&lt;|\\\[|\\\*/);
  });
});
