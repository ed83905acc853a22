import type { SelectNode } from './ast.js';
import type { ExpansionBudget } from './budget.js';
import { dateFn, type Lookup, type Rec } from './compile.js';
import type { DateFunction, ResourceSchema, SchemaRegistry } from './schema.js';

interface SelTree { star: boolean; children: Map<string, SelTree>; fns: { field: string; fn: DateFunction }[]; order: string[] }
const tree = (): SelTree => ({ star: false, children: new Map(), fns: [], order: [] });

function buildTree(fields: readonly SelectNode[], resource: ResourceSchema, schemas: SchemaRegistry): SelTree {
  const root = tree();
  for (const s of fields) {
    if (s.fn) { root.fns.push({ field: s.path[0] as string, fn: s.fn }); continue; }
    if (s.path.every((p) => p === '*')) {
      addStars(root, resource, schemas, s.path.length);
      continue;
    }
    let node = root;
    for (let i = 0; i < s.path.length; i++) {
      const seg = s.path[i] as string;
      if (seg === '*') { node.star = true; break; }
      if (!node.order.includes(seg)) node.order.push(seg);
      if (i < s.path.length - 1) {
        let child = node.children.get(seg);
        if (!child) { child = tree(); node.children.set(seg, child); }
        node = child;
      }
    }
  }
  return root;
}

function addStars(node: SelTree, resource: ResourceSchema, schemas: SchemaRegistry, depth: number): void {
  node.star = true;
  if (depth <= 1) return;
  for (const f of Object.values(resource.fields)) {
    if (!f.relation) continue;
    let child = node.children.get(f.name);
    if (!child) { child = tree(); node.children.set(f.name, child); }
    addStars(child, schemas[f.relation.resource] as ResourceSchema, schemas, depth - 1);
  }
}

export type Projector = (r: Rec) => Record<string, unknown>;

/**
 * `fields` compiled once into a projector: `*`, `*.*`, dot paths through many-to-one and one-to-many
 * relations (expanded through the lookup), and date functions (`year(date_created)` → `date_created_year`).
 */
export function compileProjection(
  fields: readonly SelectNode[], resource: ResourceSchema, schemas: SchemaRegistry, lookup: Lookup, budget?: ExpansionBudget,
): Projector {
  return projectorFor(buildTree(fields, resource, schemas), resource, schemas, lookup, budget);
}

/** True when the selection lists or expands related items (what MAX_RELATED_ITEMS counts). */
export function selectsRelations(fields: readonly SelectNode[], resource: ResourceSchema, schemas: SchemaRegistry): boolean {
  const t = buildTree(fields, resource, schemas);
  if (t.children.size > 0) return true;
  const names = t.star ? Object.keys(resource.fields) : t.order;
  return names.some((n) => Object.hasOwn(resource.fields, n) && resource.fields[n]?.relation?.kind === 'o2m');
}

function projectorFor(t: SelTree, resource: ResourceSchema, schemas: SchemaRegistry, lookup: Lookup, budget?: ExpansionBudget): Projector {
  const parentKey = resource.key;
  const names = t.star ? [...Object.keys(resource.fields), ...t.order.filter((n) => !Object.hasOwn(resource.fields, n))] : t.order;
  const steps = names.map((name) => {
    const f = Object.hasOwn(resource.fields, name) ? resource.fields[name] : undefined;
    if (!f) return (_r: Rec, _o: Record<string, unknown>) => {};
    const sub = t.children.get(name);
    const rel = f.relation;
    if (!rel) return (r: Rec, o: Record<string, unknown>) => { o[name] = r[name] ?? null; };
    const relSchema = schemas[rel.resource] as ResourceSchema;
    const subProject = sub ? projectorFor(sub, relSchema, schemas, lookup, budget) : undefined;
    if (rel.kind === 'm2o') {
      return (r: Rec, o: Record<string, unknown>) => {
        const id = r[name];
        if (!subProject || typeof id !== 'string') { o[name] = id ?? null; return; }
        const rec = lookup.one(rel.resource, id);
        if (rec) budget?.charge(1);
        o[name] = rec ? subProject(rec) : null;
      };
    }
    return (r: Rec, o: Record<string, unknown>) => {
      const items = lookup.many(rel.resource, r, name, parentKey);
      budget?.charge(items.length);
      o[name] = subProject ? items.map(subProject) : items.map((x) => x.id);
    };
  });
  const fnSteps = t.fns.map(({ field, fn }) => {
    const f = dateFn(fn);
    const key = `${field}_${fn}`;
    return (r: Rec, o: Record<string, unknown>) => { o[key] = f(r[field]); };
  });
  return (r) => {
    const o: Record<string, unknown> = {};
    for (const s of steps) s(r, o);
    for (const s of fnSteps) s(r, o);
    return o;
  };
}


