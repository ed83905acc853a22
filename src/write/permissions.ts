import type { CollectionPermission, Mappings, ResourceMapping } from '../config/mappings.js';
import { errors } from '../errors/catalog.js';

export type Action = 'read' | 'create' | 'update' | 'delete';

/** A legacy collection the role may use: its resource key, mapping and permission. */
export interface Collection {
  readonly resource: string;
  readonly mapping: ResourceMapping;
  readonly permission: CollectionPermission;
}

/**
 * The collection named in a path, as the legacy role sees it (mappings/permissions.json): an unknown collection, a system
 * collection or one the role may not use for `action` is 403 FORBIDDEN, as Directus answers all three.
 */
export function collectionFor(mappings: Pick<Mappings, 'resources' | 'permissions'>, name: string, action: Action): Collection {
  const permission = Object.hasOwn(mappings.permissions, name) ? mappings.permissions[name] : undefined;
  const entry = Object.entries(mappings.resources).find(([, r]) => r.collection === name);
  if (!permission || !entry) throw errors.forbidden();
  const allowed = action === 'read' ? permission.read : action === 'delete' ? permission.delete : permission[action].length > 0;
  if (!allowed) throw errors.forbidden();
  return { resource: entry[0], mapping: entry[1], permission };
}

/** The body of one item: a JSON object, else 400 INVALID_PAYLOAD (Directus's answer to a string, a number, null). */
export function itemBody(raw: unknown): Record<string, unknown> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw errors.invalidPayload('"payload" must be of type object');
  return raw as Record<string, unknown>;
}

/**
 * Directus's casts of a written value to its field's type (PostgreSQL's, through its driver): a number or a boolean sent
 * for a string field is stored as its text (`123` → `"123"`); other values are kept for the caller's own checks.
 */
export function cast(value: unknown, type: string): unknown {
  if ((type === 'string' || type === 'text') && (typeof value === 'number' || typeof value === 'boolean')) return String(value);
  return value;
}

/**
 * The fields of a write, checked and cast: a field the role may not set for `action`, or one that does not exist, is 403
 * FORBIDDEN (as Directus answers both alike; a field that exists is named in the message).
 */
export function writableValues(c: Collection, action: 'create' | 'update', body: Record<string, unknown>): Record<string, unknown> {
  const allowed = c.permission[action];
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) {
    const def = Object.hasOwn(c.mapping.fields, field) ? c.mapping.fields[field] : undefined;
    if (!def) throw errors.forbidden();
    if (!allowed.includes(field)) {
      // the status and code are Directus's; the message says which field (Directus names none)
      throw action === 'update' ? errors.readOnlyField(field, c.mapping.collection)
        : errors.forbidden(`You don't have permission to access this. The field "${field}" of ${c.mapping.collection} cannot be set on create.`);
    }
    out[field] = cast(value, def.type);
  }
  return out;
}
