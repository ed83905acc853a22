/**
 * Directus's schema routes for the legacy collections, generated from the mappings (mappings/resources.json: one source
 * of truth with the query parser and the answers): the collections, their fields and the relations the gateway
 * resolves, in the shapes a Directus 10.10 on PostgreSQL answers a role with app access
 * (test/fixtures/directus/schema-answers.json). System collections (`directus_*`, e.g. the users behind /users/me) are
 * not described: the gateway serves them only through their own routes.
 */
import type { Mappings, ResourceMapping } from '../config/mappings.js';
import type { FieldType } from '../query/schema.js';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

/** PostgreSQL's column facts for each Directus type (as Directus creates them). */
interface Column { readonly data_type: string; readonly max_length: number | null; readonly precision: number | null; readonly scale: number | null }
const COLUMN: Readonly<Record<Exclude<FieldType, 'alias'>, Column>> = {
  uuid: { data_type: 'uuid', max_length: null, precision: null, scale: null },
  string: { data_type: 'character varying', max_length: 255, precision: null, scale: null },
  text: { data_type: 'text', max_length: null, precision: null, scale: null },
  integer: { data_type: 'integer', max_length: null, precision: 32, scale: 0 },
  float: { data_type: 'real', max_length: null, precision: 24, scale: null },
  boolean: { data_type: 'boolean', max_length: null, precision: null, scale: null },
  timestamp: { data_type: 'timestamp with time zone', max_length: null, precision: null, scale: null },
  json: { data_type: 'json', max_length: null, precision: null, scale: null },
};

interface Described {
  readonly collections: readonly Obj[];
  readonly fields: readonly Obj[];
  readonly relations: readonly Obj[];
}

/** The legacy collections (every resource but Directus's system ones), by name, in Directus's (alphabetical) order. */
function legacyResources(m: Mappings): [string, ResourceMapping][] {
  return Object.entries(m.resources)
    .filter(([, r]) => !r.collection.startsWith('directus_'))
    .sort(([, a], [, b]) => a.collection.localeCompare(b.collection));
}

function collectionOf(name: string): Obj {
  return {
    collection: name,
    meta: {
      collection: name, icon: null, note: null, display_template: null, hidden: false, singleton: false, translations: null,
      archive_field: null, archive_app_filter: true, archive_value: null, unarchive_value: null, sort_field: null,
      accountability: 'all', color: null, item_duplication_fields: null, sort: null, group: null, collapse: 'open',
      preview_url: null, versioning: false,
    },
    schema: { schema: 'public', name, comment: null },
  };
}

function fieldMeta(id: number, collection: string, field: string, sort: number, extra: Obj): Obj {
  return {
    id, collection, field, special: null, interface: null, options: null, display: null, display_options: null, readonly: false,
    hidden: false, sort, width: 'full', translations: null, note: null, conditions: null, required: false, group: null,
    validation: null, validation_message: null, ...extra,
  };
}

/** Everything the schema routes describe, built once from the mappings. */
export function describeSchema(m: Mappings): Described {
  const resources = legacyResources(m);
  const collectionByKey = new Map(resources.map(([key, r]) => [key, r.collection]));
  const collections = resources.map(([, r]) => collectionOf(r.collection));
  const fields: Obj[] = [];
  const relations: Obj[] = [];
  let fieldId = 0;
  for (const [, r] of resources) {
    const table = r.collection;
    // columns first, in the mapping's order, then the one-to-many aliases (Directus lists fields without a column last)
    const all = Object.entries(r.fields);
    const ordered = [...all.filter(([, f]) => f.type !== 'alias'), ...all.filter(([, f]) => f.type === 'alias')];
    ordered.forEach(([name, f], i) => {
      fieldId++;
      if (f.type === 'alias') {
        const meta = fieldMeta(fieldId, table, name, i + 1, { special: ['o2m'], interface: 'list-o2m' });
        fields.push({ collection: table, field: name, type: 'alias', schema: null, meta });
        return;
      }
      const col = COLUMN[f.type];
      const primary = name === 'id';
      const target = f.relation?.kind === 'm2o' ? collectionByKey.get(f.relation.resource) : undefined;
      fields.push({
        collection: table,
        field: name,
        type: f.type,
        schema: {
          name, table, schema: 'public', data_type: col.data_type, is_nullable: !primary, generation_expression: null, default_value: null,
          is_generated: false, max_length: col.max_length, comment: null, numeric_precision: col.precision, numeric_scale: col.scale,
          is_unique: primary, is_primary_key: primary, has_auto_increment: false,
          foreign_key_schema: target ? 'public' : null, foreign_key_table: target ?? null, foreign_key_column: target ? 'id' : null,
        },
        meta: fieldMeta(fieldId, table, name, i + 1, primary ? { special: ['uuid'], interface: 'input', readonly: true, hidden: true } : {}),
      });
    });
  }
  // a relation for each many-to-one the gateway resolves; its one-to-many alias on the other side, when there is one
  for (const [key, r] of resources) {
    for (const [name, f] of Object.entries(r.fields)) {
      const one = f.relation?.kind === 'm2o' ? collectionByKey.get(f.relation.resource) : undefined;
      if (!one || !f.relation) continue;
      const oneFields = m.resources[f.relation.resource]?.fields ?? {};
      const back = Object.entries(oneFields).find(([, g]) => g.relation?.kind === 'o2m' && g.relation.resource === key)?.[0] ?? null;
      relations.push({
        collection: r.collection,
        field: name,
        related_collection: one,
        schema: {
          constraint_name: `${r.collection}_${name}_foreign`, table: r.collection, column: name, foreign_key_schema: 'public',
          foreign_key_table: one, foreign_key_column: 'id', on_update: 'NO ACTION', on_delete: 'SET NULL',
        },
        meta: {
          id: relations.length + 1, many_collection: r.collection, many_field: name, one_collection: one, one_field: back,
          one_collection_field: null, one_allowed_collections: null, junction_field: null, sort_field: null, one_deselect_action: 'nullify',
        },
      });
    }
  }
  return { collections, fields, relations };
}

/** Lookups over a description: undefined for a collection or field it does not hold (the routes' 403). */
export class SchemaRoutes {
  private readonly described: Described;
  constructor(m: Mappings) {
    this.described = describeSchema(m);
  }

  collections(): readonly Obj[] {
    return this.described.collections;
  }

  collection(name: string): Obj | undefined {
    return this.described.collections.find((c) => c.collection === name);
  }

  fields(collection?: string): readonly Obj[] | undefined {
    if (collection === undefined) return this.described.fields;
    return this.collection(collection) ? this.described.fields.filter((f) => f.collection === collection) : undefined;
  }

  field(collection: string, field: string): Obj | undefined {
    return this.described.fields.find((f) => f.collection === collection && f.field === field);
  }

  /** Directus lists a collection's relations by their many side (`/relations/projects`: projects.account). */
  relations(collection?: string): readonly Obj[] | undefined {
    if (collection === undefined) return this.described.relations;
    return this.collection(collection) ? this.described.relations.filter((r) => r.collection === collection) : undefined;
  }
}

/**
 * GET /server/info as Directus 10.10 answers it: the project's public settings to anyone, and to a signed-in user the
 * limits a client may read (no rate limiter of Directus's kind, the query limits, no websockets) and the version of the API
 * the gateway reproduces.
 */
export function serverInfo(signedIn: boolean, limits: { readonly default: number; readonly max: number | undefined }): Obj {
  const project: Obj = { project_name: 'Directus', project_color: '#6644FF', default_language: 'en-US', default_appearance: 'auto' };
  if (!signedIn) return { project };
  return {
    project,
    rateLimit: false,
    rateLimitGlobal: false,
    extensions: { limit: null },
    queryLimit: { default: limits.default, max: limits.max ?? -1 },
    websocket: false,
    version: '10.10.0',
  };
}
