import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The import structure of src/, read from the files: no cycles (type imports count: a cycle of types is still a
 * tangle), and the layer rules — the pure stages (query/, plan/, translate/) reach no framework, store, v1 client or
 * HTTP module at run time, no module but the app's root imports a route file, the store imports no feature, the v1
 * client's folder imports no store and the operator actions import nothing of the command line.
 */
interface Edge { readonly to: string; readonly typeOnly: boolean; readonly spec: string }

const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true })
  .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));

const IMPORT = /^\s*(import|export)\s+(type\s+)?([^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;

function graph(): Map<string, Edge[]> {
  const g = new Map<string, Edge[]>();
  for (const f of files('src')) {
    const text = readFileSync(f, 'utf8');
    const edges: Edge[] = [];
    for (const m of text.matchAll(IMPORT)) {
      const [, , typeKw, clause, spec] = m as unknown as [string, string, string | undefined, string | undefined, string];
      // `import { type A, type B } from` is type-only too
      const named = clause ? /^\{([^}]*)\}\s+from\s+$/.exec(clause.trim() + ' ')?.[1] : undefined;
      const allTypes = named !== undefined && named.split(',').map((s) => s.trim()).filter(Boolean).every((s) => s.startsWith('type '));
      const typeOnly = !!typeKw || allTypes;
      const to = spec.startsWith('.') ? normalize(join(dirname(f), spec.replace(/\.js$/, '.ts'))) : spec;
      edges.push({ to, typeOnly, spec });
    }
    g.set(normalize(f), edges);
  }
  return g;
}

/** Strongly connected components with more than one file (or a file importing itself). */
function cycles(g: Map<string, Edge[]>): string[][] {
  let n = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, n); low.set(v, n); n++;
    stack.push(v); on.add(v);
    for (const e of g.get(v) ?? []) {
      if (!g.has(e.to)) continue;
      if (!index.has(e.to)) { visit(e.to); low.set(v, Math.min(low.get(v)!, low.get(e.to)!)); }
      else if (on.has(e.to)) low.set(v, Math.min(low.get(v)!, index.get(e.to)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do { w = stack.pop()!; on.delete(w); scc.push(w); } while (w !== v);
      if (scc.length > 1 || (g.get(v) ?? []).some((e) => e.to === v)) out.push(scc.sort());
    }
  };
  for (const v of [...g.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

const PURE = ['src/query/', 'src/plan/', 'src/translate/', 'src/exec/'];
const FORBIDDEN_AT_RUN_TIME = (e: Edge) =>
  e.spec === 'fastify' || e.spec.startsWith('@fastify/') || e.spec === 'undici' || e.spec === 'pg' || e.spec === 'kysely' || e.spec === 'libsql' ||
  e.to.startsWith('src/store/') || e.to === 'src/v1/client.ts' || e.to.startsWith('src/http/') || e.to.startsWith('src/routes/');

/**
 * The store is the bottom layer: what it may import, type imports included (a type from a feature ties the store to
 * that feature all the same). Itself; the pure helpers of lib/; the v1 contract's schemas and types, which are what
 * it keeps (replica-store.ts stores v1 objects; recency.ts ranks v1 statuses). Nothing else: not errors/ nor config/
 * (no store module needs them), no feature (compare/, replica/, migrate/ …), no v1 client, no log/. A migration
 * carries the rules it applies inside the store (redaction-0010.ts): replaying it must not follow a feature's changes.
 */
const STORE_MAY_IMPORT = ['src/store/', 'src/lib/', 'src/v1/schemas.ts'];
/** What a file imports against a rule: `from → spec` for each relative import of a file under `dir` that `ok` refuses. */
const breaks = (g: Map<string, Edge[]>, dir: string, ok: (to: string) => boolean) => [...g].filter(([f]) => f.startsWith(dir))
  .flatMap(([f, es]) => es.filter((e) => e.spec.startsWith('.') && !ok(e.to)).map((e) => `${f} → ${e.spec}`));
const storeBreaks = (g: Map<string, Edge[]>) => breaks(g, 'src/store/', (to) => STORE_MAY_IMPORT.some((p) => to.startsWith(p)));
/** src/v1/ (the contract, the client, the held keys) imports nothing of the store: what it needs is passed in (deps.ts). */
const v1Breaks = (g: Map<string, Edge[]>) => breaks(g, 'src/v1/', (to) => !to.startsWith('src/store/'));
/** The operator actions (admin/) are called by the command line (cli/), never the other way round. */
const adminBreaks = (g: Map<string, Edge[]>) => breaks(g, 'src/admin/', (to) => !to.startsWith('src/cli/'));

/** The place a file stands in: its folder under src/ (`src/read`), or itself for a file at src/'s top (`src/deps.ts`). */
const placeOf = (f: string) => (f.split('/').length > 2 ? f.split('/').slice(0, 2).join('/') : f);

/**
 * The import graph between places (folders, and the files at src/'s top), type imports included: a cycle here — two
 * folders importing each other, or a folder importing the composition root (`deps.ts`) that builds it — is a layer that
 * points up (issue 40: ten such pairs, and sixteen arrows running back up).
 */
function places(g: Map<string, Edge[]>): Map<string, Edge[]> {
  const out = new Map<string, Edge[]>();
  for (const [f, es] of g) {
    const from = placeOf(f);
    const list = out.get(from) ?? [];
    for (const e of es) {
      if (!e.spec.startsWith('.') || !g.has(e.to)) continue;
      const to = placeOf(e.to);
      if (to !== from && !list.some((x) => x.to === to)) list.push({ to, typeOnly: e.typeOnly, spec: e.spec });
    }
    out.set(from, list);
  }
  return out;
}

/** The floors a list names (`a/`, `b.ts`; `c/` …: one floor a `;`, bottom first) → place → floor. */
function floorsOf(list: string): Map<string, number> {
  const out = new Map<string, number>();
  list.split(';').forEach((floor, i) => {
    for (const name of floor.split(',').map((x) => x.replace(/`/g, '').trim()).filter(Boolean)) out.set(`src/${name.replace(/\/$/, '')}`, i);
  });
  return out;
}

/** Imports between places that do not run down the floors (a place on no floor breaks too). */
function floorBreaks(g: Map<string, Edge[]>, floors: Map<string, number>): string[] {
  return [...g].flatMap(([from, es]) => es.filter((e) => !(floors.has(from) && floors.has(e.to) && floors.get(e.to)! < floors.get(from)!))
    .map((e) => `${from} → ${e.to}`));
}

describe('src/ import structure', () => {
  const g = graph();

  it('reads every file and resolves every relative import', () => {
    expect(g.size).toBeGreaterThan(100);
    const unresolved = [...g].flatMap(([f, es]) => es.filter((e) => e.spec.startsWith('.') && !g.has(e.to)).map((e) => `${f} → ${e.spec}`));
    expect(unresolved).toEqual([]);
  });

  it('has no import cycle, type imports included', () => {
    expect(cycles(g)).toEqual([]);
  });

  it('keeps query/, plan/, translate/ and exec/ free of the framework, the store, the v1 client and HTTP at run time', () => {
    const bad = [...g].filter(([f]) => PURE.some((p) => f.startsWith(p)))
      .flatMap(([f, es]) => es.filter((e) => !e.typeOnly && FORBIDDEN_AT_RUN_TIME(e)).map((e) => `${f} → ${e.spec}`));
    expect(bad).toEqual([]);
  });

  it('lets no module but the app\'s root import a route file', () => {
    const bad = [...g].filter(([f]) => f !== 'src/app.ts').flatMap(([f, es]) => es.filter((e) => e.to.startsWith('src/routes/') && !f.startsWith('src/routes/'))
      .map((e) => `${f} → ${relative('src', e.to)}`));
    expect(bad).toEqual([]);
  });

  it('keeps the store at the bottom: src/store/ imports only store/, lib/ and the v1 schemas, type imports included', () => {
    expect(storeBreaks(g)).toEqual([]);
  });

  it('keeps src/v1/ free of the store, and admin/ free of the command line', () => {
    expect(v1Breaks(g)).toEqual([]);
    expect(adminBreaks(g)).toEqual([]);
  });

  it('gives the read one owner: http/, routes/ and shape/ use the replica\'s types only, and only read/source.ts asks it for a source', () => {
    const bad = [...g].filter(([f]) => ['src/http/', 'src/routes/', 'src/shape/'].some((p) => f.startsWith(p)))
      .flatMap(([f, es]) => es.filter((e) => !e.typeOnly && e.to.startsWith('src/replica/')).map((e) => `${f} → ${e.spec}`));
    expect(bad).toEqual([]);
    // the source choice is one function: no other module calls the replica's `source(`
    const asking = [...g.keys()].filter((f) => !f.startsWith('src/replica/') && /\breplica\??\.source\(/.test(readFileSync(f, 'utf8')));
    expect(asking).toEqual(['src/read/source.ts']);
  });

  it('has layers that only point down: no two folders import each other, no folder imports the composition root, type imports included', () => {
    const found = cycles(places(g));
    expect(found).toEqual([]);
    expect(places(g).size).toBeGreaterThan(20);
  });

  it('holds docs/architecture.md\'s floors: every place imports only places on floors below its own, and every place is on one', () => {
    const text = readFileSync('docs/architecture.md', 'utf8').replace(/\s+/g, ' ');
    const list = /The order, bottom up \(one floor a `;`\): (.*?) — each place imports only/.exec(text)?.[1];
    expect(list).toBeDefined();
    const floors = floorsOf(list!);
    expect(floorBreaks(places(g), floors)).toEqual([]);
    // the list is read: a planted upward import breaks it
    expect(floorBreaks(new Map([['src/lib', [{ to: 'src/store', typeOnly: true, spec: '../store/x.js' }]]]), floors)).toEqual(['src/lib → src/store']);
  });

  it('finds a planted cycle and a planted layer break (the checks can fail)', () => {
    // two folders importing each other through different files, and a folder importing the composition root
    const folders = new Map<string, Edge[]>([
      ['src/http/send-read.ts', [{ to: 'src/compare/legacy-side.ts', typeOnly: false, spec: '../compare/legacy-side.js' }]],
      ['src/compare/legacy-side.ts', []],
      ['src/compare/modes.ts', [{ to: 'src/http/route-facts.ts', typeOnly: true, spec: '../http/route-facts.js' }]],
      ['src/http/route-facts.ts', []],
      ['src/deps.ts', [{ to: 'src/read/items.ts', typeOnly: false, spec: './read/items.js' }]],
      ['src/read/items.ts', [{ to: 'src/deps.ts', typeOnly: true, spec: '../deps.js' }]],
    ]);
    expect(cycles(folders)).toEqual([['src/deps.ts', 'src/read/items.ts']]);
    expect(cycles(places(folders))).toEqual([['src/compare', 'src/http'], ['src/deps.ts', 'src/read']]);
    const planted = new Map<string, Edge[]>([
      ['src/a.ts', [{ to: 'src/b.ts', typeOnly: true, spec: './b.js' }]],
      ['src/b.ts', [{ to: 'src/a.ts', typeOnly: false, spec: './a.js' }]],
    ]);
    expect(cycles(planted)).toEqual([['src/a.ts', 'src/b.ts']]);
    expect(FORBIDDEN_AT_RUN_TIME({ to: 'src/store/db.ts', typeOnly: false, spec: '../store/db.js' })).toBe(true);
    const upward = new Map<string, Edge[]>([
      ['src/store/compare.ts', [
        { to: 'src/store/schema.ts', typeOnly: true, spec: './schema.js' },
        { to: 'src/lib/clock.ts', typeOnly: false, spec: '../lib/clock.js' },
        { to: 'src/v1/schemas.ts', typeOnly: true, spec: '../v1/schemas.js' },
        { to: 'src/compare/diff.ts', typeOnly: true, spec: '../compare/diff.js' },
        { to: 'src/v1/client.ts', typeOnly: false, spec: '../v1/client.js' },
      ]],
      ['src/v1/keys.ts', [{ to: 'src/store/changes.ts', typeOnly: true, spec: '../store/changes.js' }]],
      ['src/admin/operations.ts', [{ to: 'src/cli/csv.ts', typeOnly: false, spec: '../cli/csv.js' }]],
    ]);
    expect(storeBreaks(upward)).toEqual(['src/store/compare.ts → ../compare/diff.js', 'src/store/compare.ts → ../v1/client.js']);
    expect(v1Breaks(upward)).toEqual(['src/v1/keys.ts → ../store/changes.js']);
    expect(adminBreaks(upward)).toEqual(['src/admin/operations.ts → ../cli/csv.js']);
  });
});
