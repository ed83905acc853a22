import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { FieldDef, ResourceSchema, SchemaRegistry } from '../query/schema.js';
import { isRecordResource, ONE_TO_MANY, oneToMany } from '../query/resources.js';
import { RENDER_STATUSES, type RenderStatus } from '../v1/schemas.js';

const FieldTypeSchema = z.enum(['uuid', 'string', 'text', 'integer', 'float', 'boolean', 'timestamp', 'json', 'alias']);
const SourceSchema = z.object({
  kind: z.enum(['v1', 'store', 'derived', 'none']),
  from: z.string().optional(),
  how: z.string().optional(),
  value: z.unknown().optional(),
});
const FieldMappingSchema = z
  .object({
    type: FieldTypeSchema,
    relation: z.object({ kind: z.enum(['m2o', 'o2m']), resource: z.string() }).optional(),
    source: SourceSchema,
    write: z.enum(['overlay', 'reject', 'readonly']).optional(),
  })
  .strict();
const ResourceMappingSchema = z
  .object({
    collection: z.string(),
    v1: z.string(),
    defaultSort: z.array(z.string()).min(1),
    fields: z.record(z.string(), FieldMappingSchema),
  })
  .strict();
/** `$comment` (and any `$…` key) is documentation; every other key is a resource, validated field by field. */
const ResourcesFileSchema = z.preprocess(
  (v) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).filter(([k]) => !k.startsWith('$'))) : v),
  z.record(z.string(), ResourceMappingSchema),
);

const StatusesFileSchema = z
  .object({
    render: z.object({
      toLegacy: z.record(z.string(), z.string()),
      legacyValues: z.array(z.string()).min(1),
    }),
  })
  .loose();

const OutputsFileSchema = z
  .object({
    master: z.string(),
    byName: z.object({ high: z.array(z.string()), medium: z.array(z.string()), low: z.array(z.string()) }),
    sizeOrder: z.array(z.string()),
    stills: z.array(z.string()),
    ignored: z.array(z.string()).default([]),
    legacyKeys: z.array(z.string()),
  })
  .loose();

const WritesFileSchema = z
  .object({
    templateRules: z.record(z.string(), z.string()).default({}),
    idempotencyWindowHours: z.number().positive().default(24),
    lostResponseWindowSeconds: z.number().positive().default(120),
    /** How far v1's clock may be behind ours when a lost render is looked for (its created_at vs the request's start). */
    clockSkewSeconds: z.number().min(0).default(5),
    /** How long a pending Idempotency-Key claim holds before another request may take it over (a crashed holder). */
    claimLeaseSeconds: z.number().positive().default(60),
  })
  .loose();

/** The legacy users' role (permissions.json): per collection, read, the fields create and update may set, delete. */
const CollectionPermissionSchema = z
  .object({ read: z.boolean(), create: z.array(z.string()), update: z.array(z.string()), delete: z.boolean() })
  .strict();
const PermissionsFileSchema = z.object({ collections: z.record(z.string(), CollectionPermissionSchema) }).loose();

/** What POST /renders can carry to v1: the only create the gateway serves. */
export const CREATABLE_RENDER_FIELDS: readonly string[] = ['project', 'account', 'data', 'title'];

const ComparisonFileSchema = z
  .object({
    ignoredPaths: z.array(z.string()).default([]),
    timestampToleranceMs: z.number().min(0).default(1000),
    signedUrlsWithoutQuery: z.boolean().default(true),
    unorderedArraysWithoutSort: z.boolean().default(true),
    noiseRepeat: z.boolean().default(true),
  })
  .loose();

export type FieldMapping = z.infer<typeof FieldMappingSchema>;
export type ResourceMapping = z.infer<typeof ResourceMappingSchema>;
export type OutputsMapping = z.infer<typeof OutputsFileSchema>;
export type WritesMapping = z.infer<typeof WritesFileSchema>;
export type ComparisonMapping = z.infer<typeof ComparisonFileSchema>;
export type CollectionPermission = z.infer<typeof CollectionPermissionSchema>;

export interface Mappings {
  readonly resources: Readonly<Record<string, ResourceMapping>>;
  readonly schemas: SchemaRegistry;
  readonly status: {
    readonly toLegacy: Readonly<Record<RenderStatus, string>>;
    /** legacy status → the v1 statuses it stands for (empty for `deleted`). */
    readonly toV1: Readonly<Record<string, readonly RenderStatus[]>>;
  };
  readonly outputs: OutputsMapping;
  readonly writes: WritesMapping;
  readonly comparison: ComparisonMapping;
  /** The legacy role's permissions by collection name (`renders`, …); a collection not listed is not accessible. */
  readonly permissions: Readonly<Record<string, CollectionPermission>>;
  /** mappings/clients.json: the User-Agent families, first match wins. */
  readonly userAgentFamilies: readonly UserAgentFamily[];
}

/** mappings/clients.json: the User-Agent families the migration report names clients by, first match wins. */
const ClientsFileSchema = z.object({
  $comment: z.string().optional(),
  userAgentFamilies: z.array(z.object({
    match: z.string().min(1).max(200).refine((s) => { try { new RegExp(s, 'i'); return true; } catch { return false; } }, 'is not a regular expression'),
    family: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,39}$/, 'is lower-case letters, digits, ".", "_" or "-", at most 40')
      .refine((f) => f !== 'none' && f !== 'other', '"none" and "other" are the report\'s own names'),
  }).strict()).max(200),
}).strict();

/** A User-Agent family: the pattern (case-insensitive) and the name a matching client is given. */
export type UserAgentFamily = readonly [RegExp, string];

export class MappingError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid mappings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'MappingError';
  }
}

function read<T extends z.ZodType>(dir: string, file: string, schema: T, problems: string[]): z.infer<T> | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  } catch (e) {
    problems.push(`${file}: ${(e as Error).message}`);
    return undefined;
  }
  const r = schema.safeParse(raw);
  if (!r.success) {
    for (const i of r.error.issues) problems.push(`${file}: ${i.path.join('.') || '(root)'}: ${i.message}`);
    return undefined;
  }
  return r.data;
}

/** Reads and validates every mapping file; a bad mapping stops the gateway with every problem listed. */
export function loadMappings(dir: string): Mappings {
  const problems: string[] = [];
  const resourcesRaw = read(dir, 'resources.json', ResourcesFileSchema, problems);
  const statuses = read(dir, 'statuses.json', StatusesFileSchema, problems);
  const outputs = read(dir, 'outputs.json', OutputsFileSchema, problems);
  const writes = read(dir, 'writes.json', WritesFileSchema, problems);
  const comparison = read(dir, 'comparison.json', ComparisonFileSchema, problems);
  const permissions = read(dir, 'permissions.json', PermissionsFileSchema, problems);
  const clients = read(dir, 'clients.json', ClientsFileSchema, problems);
  // every file's own checks run whenever that file parsed, so one bad file never hides another's problems
  const resources: Record<string, ResourceMapping> = { ...(resourcesRaw ?? {}) };
  const schemas: Record<string, ResourceSchema> = {};
  if (resourcesRaw) {
    for (const required of ['render', 'project', 'account', 'template', 'user']) {
      if (!resources[required]) problems.push(`resources.json: resource "${required}" is missing`);
    }
    for (const [name, r] of Object.entries(resources)) {
      const fields: Record<string, FieldDef> = {};
      for (const [fname, f] of Object.entries(r.fields)) {
        const at = `resources.json: ${name}.fields.${fname}`;
        if (f.relation && !resources[f.relation.resource]) problems.push(`${at}: relates to unknown resource "${f.relation.resource}"`);
        if (f.relation?.kind === 'o2m' && f.type !== 'alias') problems.push(`${at}: is one-to-many, so its type must be "alias"`);
        if (f.type === 'alias' && f.relation?.kind !== 'o2m') problems.push(`${at}: has type alias but no one-to-many relation`);
        if (f.source.kind === 'none' && !('value' in f.source)) problems.push(`${at}: has no v1 source, so it needs a constant "value"`);
        fields[fname] = { name: fname, type: f.type, ...(f.relation ? { relation: f.relation } : {}) };
      }
      if (!fields.id) problems.push(`resources.json: ${name} has no id field`);
      for (const s of r.defaultSort)
        if (!fields[s.replace(/^-/, '')]) problems.push(`resources.json: ${name}.defaultSort names unknown field "${s}"`);
      schemas[name] = Object.freeze({ key: name, name: r.collection, fields: Object.freeze(fields), defaultSort: Object.freeze([...r.defaultSort]) });
    }
    checkOneToMany(resources, problems);
  }
  const toLegacy = statuses?.render.toLegacy ?? {};
  const toV1: Record<string, RenderStatus[]> = Object.fromEntries((statuses?.render.legacyValues ?? []).map((l) => [l, []]));
  if (statuses) {
    for (const s of RENDER_STATUSES) if (!toLegacy[s]) problems.push(`statuses.json: render.toLegacy: v1 status "${s}" has no legacy status`);
    for (const [v1, legacy] of Object.entries(toLegacy)) {
      if (!(RENDER_STATUSES as readonly string[]).includes(v1))
        problems.push(`statuses.json: render.toLegacy.${v1}: "${v1}" is not a v1 render status`);
      if (!statuses.render.legacyValues.includes(legacy)) problems.push(`statuses.json: render.toLegacy.${v1}: "${legacy}" is not a legacy status`);
    }
    for (const [v1, legacy] of Object.entries(toLegacy)) toV1[legacy]?.push(v1 as RenderStatus);
  }
  if (outputs)
    for (const key of ['poster', 'low', 'medium', 'high', 'master'])
      if (!outputs.legacyKeys.includes(key)) problems.push(`outputs.json: legacyKeys lacks "${key}"`);
  if (writes) {
    for (const [project, template] of Object.entries(writes.templateRules)) {
      if (!/^[0-9a-f-]{36}$/i.test(project) || !template.startsWith('tpl_')) {
        problems.push(`writes.json: templateRules.${project}: "${project}" → "${template}" must map a project uuid to a tpl_ id`);
      }
    }
  }
  if (permissions && resourcesRaw) checkPermissions(permissions.collections, resources, problems);
  if (!resourcesRaw || !statuses || !outputs || !writes || !comparison || !permissions || !clients) throw new MappingError(problems);
  if (problems.length > 0) throw new MappingError(problems);
  return Object.freeze({
    resources,
    schemas: Object.freeze(schemas),
    status: { toLegacy: toLegacy as Record<RenderStatus, string>, toV1 },
    outputs,
    writes,
    comparison,
    permissions: permissions?.collections ?? {},
    userAgentFamilies: Object.freeze(clients.userAgentFamilies.map((f) => Object.freeze([new RegExp(f.match, 'i'), f.family] as const))),
  });
}

/**
 * The role must be one the gateway can honour: known collections and fields, update only of overlay fields, create only
 * of renders (with what POST /renders carries), no delete (v1 cannot undo a render).
 */
/**
 * The one-to-many fields between record resources are the relations the code knows (`ONE_TO_MANY`, each source's table
 * of how to reach the children): one the code lacks, or one the mappings lack, is a start-up error.
 */
function checkOneToMany(resources: Readonly<Record<string, ResourceMapping>>, problems: string[]): void {
  const seen = new Set<string>();
  for (const [name, r] of Object.entries(resources)) {
    if (!isRecordResource(name)) continue;
    for (const [fname, f] of Object.entries(r.fields)) {
      if (f.relation?.kind !== 'o2m') continue;
      const rel = oneToMany(name, fname);
      if (!rel) {
        problems.push(`resources.json: ${name}.fields.${fname}: a one-to-many relation the gateway does not know (src/query/resources.ts)`);
        continue;
      }
      seen.add(rel);
      if (ONE_TO_MANY[rel].child !== f.relation.resource)
        problems.push(`resources.json: ${name}.fields.${fname}: relates to "${f.relation.resource}", the gateway lists ${ONE_TO_MANY[rel].child}`);
    }
  }
  for (const rel of Object.keys(ONE_TO_MANY)) if (!seen.has(rel)) problems.push(`resources.json: the one-to-many field ${rel} is missing`);
}

function checkPermissions(
  collections: Readonly<Record<string, CollectionPermission>>, resources: Readonly<Record<string, ResourceMapping>>, problems: string[],
): void {
  for (const [collection, p] of Object.entries(collections)) {
    const at = `permissions.json: collections.${collection}`;
    const r = Object.values(resources).find((x) => x.collection === collection);
    if (!r) { problems.push(`${at}: "${collection}" is not the collection of a resource in resources.json`); continue; }
    for (const f of [...p.create, ...p.update]) if (!Object.hasOwn(r.fields, f)) problems.push(`${at}: "${f}" is not a field of ${collection}`);
    for (const f of p.update) {
      if (Object.hasOwn(r.fields, f) && r.fields[f]?.write !== 'overlay') problems.push(`${at}.update: "${f}" does not have the overlay write policy`);
    }
    if (p.create.length > 0 && collection !== 'renders') problems.push(`${at}.create: only renders can be created`);
    for (const f of p.create) if (!CREATABLE_RENDER_FIELDS.includes(f)) problems.push(`${at}.create: "${f}" cannot be sent to v1`);
    if (p.create.length > 0 && !['project', 'account'].every((f) => p.create.includes(f))) problems.push(`${at}.create: needs project and account`);
    if (p.delete) problems.push(`${at}.delete: cannot be granted (v1 cannot undo a render)`);
  }
}
