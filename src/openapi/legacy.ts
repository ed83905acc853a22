import type { Mappings } from '../config/mappings.js';
import { own } from '../lib/own.js';
import { ERROR_STATUS } from '../errors/catalog.js';
import type { FieldDef, ResourceSchema } from '../query/schema.js';

type Json = Record<string, unknown>;
const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);
/**
 * A resource's schema component, named as Directus 10.10 names it (`ItemsRenders`, … and `Users` for directus_users), so
 * the type generators written for Directus's document find the legacy objects under the names they look for.
 */
export const componentName = (collection: string): string => (collection.startsWith('directus_') ? cap(collection.slice(9)) : `Items${cap(collection)}`);
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A legacy field's JSON Schema, from its Directus type (every field may be absent: `fields` chooses them). */
function fieldSchema(f: FieldDef, resource: ResourceSchema, m: Mappings): Json {
  if (f.relation?.kind === 'm2o')
    return {
      oneOf: [{ type: 'string', format: 'uuid' }, ref(componentName(m.schemas[f.relation.resource]!.name)), { type: 'null' }],
      description: `${f.relation.resource} uuid, or the object when fields expand it`,
    };
  if (f.relation?.kind === 'o2m') {
    return { type: 'array', items: { oneOf: [{ type: 'string', format: 'uuid' }, ref(componentName(m.schemas[f.relation.resource]!.name))] } };
  }
  // a status translated from v1's (mappings/statuses.json): the legacy values
  const source = own(own(m.resources, resource.key)?.fields, f.name)?.source;
  if (source?.kind === 'derived' && source.from === 'status') return { type: 'string', enum: Object.keys(m.status.toV1) };
  switch (f.type) {
    case 'uuid':
      return { type: ['string', 'null'], format: 'uuid' };
    case 'timestamp':
      return { type: ['string', 'null'], format: 'date-time' };
    case 'integer':
      return { type: ['integer', 'null'] };
    case 'float':
      return { type: ['number', 'null'] };
    case 'boolean':
      return { type: ['boolean', 'null'] };
    case 'json':
      return {};
    default:
      return { type: ['string', 'null'] };
  }
}

const QUERY: readonly [string, string][] = [
  ['fields', 'Fields to return: comma list or fields[]; dot paths through relations (project.title), * and *.*, date functions (year(date_created))'],
  [
    'filter',
    'Directus filter rules: bracket form (filter[status][_eq]=complete) or JSON; _and/_or, _some/_none, ' +
      'every operator of the field type, $NOW(±n unit), $CURRENT_USER',
  ],
  ['search', 'Case-insensitive search over the text fields'],
  ['sort', 'Comma list; -field for descending; dot paths through many-to-one relations'],
  ['limit', 'Items per page (default QUERY_LIMIT_DEFAULT); -1 for all'],
  ['offset', 'Items to skip'],
  ['page', 'Page number, 1-indexed; wins over offset'],
  ['meta', 'total_count, filter_count or *'],
  ['aggregate', 'aggregate[count]=*, aggregate[sum]=field, … (count, countDistinct, sum, sumDistinct, avg, avgDistinct, min, max)'],
  ['groupBy', 'Fields to group aggregates by (date functions allowed)'],
  ['deep', 'Per-relation queries, as JSON or bracket form: deep[renders][_limit]=5, _filter, _sort, _search, _offset, nested relations'],
  ['alias', 'Extra names for top-level fields (alias[latest]=renders), usable in fields and deep'],
  ['export', 'The answer as a file to download: csv, json, xml or yaml (as Directus writes them; limit=-1 streams)'],
];
const queryParams = (names: readonly string[]) =>
  QUERY.filter(([n]) => names.includes(n)).map(([name, description]) => ({ name, in: 'query', required: false, description, schema: {} }));
const LIST_PARAMS = QUERY.map(([n]) => n);
const ONE_PARAMS = ['fields', 'deep', 'alias', 'export'];

const json = (schema: Json, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const errorsOf = (...codes: (keyof typeof ERROR_STATUS)[]): Json =>
  Object.fromEntries(
    [...new Set(codes.map((c) => ERROR_STATUS[c]))].map((status) => [
      String(status),
      json(ref('Errors'), codes.filter((c) => ERROR_STATUS[c] === status).join(', ')),
    ]),
  );
const READ_ERRORS = errorsOf(
  'INVALID_QUERY',
  'INVALID_CREDENTIALS',
  'TOKEN_EXPIRED',
  'INVALID_TOKEN',
  'FORBIDDEN',
  'REQUESTS_EXCEEDED',
  'SERVICE_UNAVAILABLE',
);
const idParam = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description: 'The item uuid (a malformed, unknown or unreachable one answers 403 FORBIDDEN)',
};

/**
 * The legacy surface as OpenAPI 3.1, generated from the mappings (every resource, field, type and status value), with
 * the query parameters, the Directus error envelope and the auth endpoints. Served at /server/specs/oas and /openapi.json.
 */
export function legacyOpenApi(m: Mappings): Json {
  const schemas: Json = {
    Errors: {
      type: 'object',
      required: ['errors'],
      properties: {
        errors: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            required: ['message', 'extensions'],
            properties: {
              message: { type: 'string' },
              extensions: { type: 'object', required: ['code'], properties: { code: { type: 'string', enum: Object.keys(ERROR_STATUS) } } },
            },
          },
        },
      },
    },
    Meta: { type: 'object', properties: { total_count: { type: 'integer' }, filter_count: { type: 'integer' } } },
    /** POST /renders: the fields the legacy role may set on create (mappings/permissions.json); a number or boolean title is cast to text. */
    RenderCreate: {
      type: 'object',
      required: ['project', 'account', 'data'],
      additionalProperties: false,
      properties: {
        project: { type: 'string', format: 'uuid' },
        account: { type: 'string', format: 'uuid' },
        title: { type: ['string', 'number', 'boolean', 'null'] },
        data: { type: 'object' },
      },
    },
    Tokens: {
      type: 'object',
      required: ['data'],
      properties: {
        data: {
          type: 'object',
          required: ['expires'],
          description:
            'json mode: access_token, refresh_token, expires; cookie mode: access_token, expires; session mode: expires only (the token is in a cookie)',
          properties: { access_token: { type: 'string' }, expires: { type: 'integer', description: 'ms' }, refresh_token: { type: 'string' } },
        },
      },
    },
  };
  for (const r of Object.values(m.schemas)) {
    schemas[componentName(r.name)] = {
      type: 'object', 'x-collection': r.name, properties: Object.fromEntries(Object.values(r.fields).map((f) => [f.name, fieldSchema(f, r, m)])),
    };
  }
  const paths: Json = {};
  const collections: [string, string][] = [
    ['renders', 'render'],
    ['projects', 'project'],
    ['accounts', 'account'],
    ['templates', 'template'],
  ];
  // what the legacy role may create and update (mappings/permissions.json)
  const may = (collection: string, action: 'create' | 'update') => (own(m.permissions, collection)?.[action].length ?? 0) > 0;
  for (const [collection, key] of collections) {
    const item = ref(componentName(collection));
    for (const base of [`/${collection}`, `/items/${collection}`]) {
      paths[base] = {
        get: {
          operationId: `list${cap(collection)}${base.startsWith('/items') ? 'Items' : ''}`,
          tags: [collection],
          description: 'Also as SEARCH (Directus), the query in a JSON body: {"query": {...}} or {"keys": [...]}; OpenAPI 3.1 has no SEARCH operation.',
          parameters: queryParams(LIST_PARAMS),
          responses: {
            200: json({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: item }, meta: ref('Meta') } }),
            ...READ_ERRORS,
          },
        },
        ...(may(collection, 'create')
          ? {
              post: {
                operationId: `createRender${base.startsWith('/items') ? 'Item' : ''}`,
                tags: [collection],
                parameters: [
                  ...queryParams(['fields']),
                  { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } },
                ],
                requestBody: {
                  required: true,
                  content: {
                    'application/json': {
                      // one render, or an array of them (answered as an array in primary-key order; docs/clients.md)
                      schema: { oneOf: [ref('RenderCreate'), { type: 'array', items: ref('RenderCreate') }] },
                    },
                  },
                },
                responses: {
                  200: json({ type: 'object', properties: { data: { oneOf: [item, { type: 'array', items: item }] } } }),
                  ...errorsOf('INVALID_PAYLOAD', 'INVALID_QUERY', 'INVALID_FOREIGN_KEY', 'FORBIDDEN', 'PAYMENT_REQUIRED', 'SERVICE_UNAVAILABLE'),
                },
              },
            }
          : {}),
        ...(may(collection, 'update')
          ? {
              patch: {
                operationId: `update${cap(collection)}${base.startsWith('/items') ? 'Items' : ''}`,
                tags: [collection],
                parameters: queryParams(['fields']),
                description: 'Several items: {"keys": [...], "data": {...}}, {"query": {...}, "data": {...}}, or an array of items with their id; ' +
                  'only the fields the legacy role may update (mappings/permissions.json); answered in primary-key order.',
                requestBody: {
                  required: true,
                  content: { 'application/json': { schema: { oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object', required: ['id'] } }] } } },
                },
                responses: {
                  200: json({ type: 'object', properties: { data: { type: 'array', items: item } } }),
                  ...errorsOf('INVALID_PAYLOAD', 'INVALID_QUERY', 'FORBIDDEN'),
                },
              },
            }
          : {}),
      };
      paths[`${base}/{id}`] = {
        get: {
          operationId: `read${cap(key)}${base.startsWith('/items') ? 'Item' : ''}`,
          tags: [collection],
          parameters: [idParam, ...queryParams(ONE_PARAMS)],
          responses: { 200: json({ type: 'object', properties: { data: item } }), ...READ_ERRORS },
        },
        ...(may(collection, 'update')
          ? {
              patch: {
                operationId: `update${cap(key)}${base.startsWith('/items') ? 'Item' : ''}`,
                tags: [collection],
                parameters: [idParam, ...queryParams(['fields'])],
                description: 'Only the fields the legacy role may update (mappings/permissions.json) can be changed; others answer 403.',
                requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
                responses: { 200: json({ type: 'object', properties: { data: item } }), ...errorsOf('INVALID_PAYLOAD', 'FORBIDDEN') },
              },
            }
          : {}),
      };
    }
  }
  paths['/users/me'] = {
    get: {
      operationId: 'readMe',
      tags: ['users'],
      parameters: queryParams(ONE_PARAMS),
      responses: {
        200: json({ type: 'object', properties: { data: ref(componentName('directus_users')) } }), ...errorsOf('INVALID_CREDENTIALS', 'INVALID_TOKEN'),
      },
    },
    patch: {
      operationId: 'updateMe',
      tags: ['users'],
      requestBody: {
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: {
                first_name: { type: ['string', 'null'] },
                last_name: { type: ['string', 'null'] },
                email: { type: 'string', format: 'email' },
              },
            },
          },
        },
      },
      responses: {
        200: json({ type: 'object', properties: { data: ref(componentName('directus_users')) } }),
        ...errorsOf('INVALID_PAYLOAD', 'RECORD_NOT_UNIQUE', 'INVALID_CREDENTIALS'),
      },
    },
  };
  const mode = { type: 'string', enum: ['json', 'cookie', 'session'] };
  paths['/auth/login'] = {
    post: {
      operationId: 'login',
      tags: ['auth'],
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['email', 'password'],
              properties: { email: { type: 'string' }, password: { type: 'string' }, mode },
            },
          },
        },
      },
      responses: { 200: json(ref('Tokens')), ...errorsOf('INVALID_PAYLOAD', 'INVALID_CREDENTIALS', 'REQUESTS_EXCEEDED') },
    },
  };
  paths['/auth/refresh'] = {
    post: {
      operationId: 'refresh',
      tags: ['auth'],
      security: [],
      requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { refresh_token: { type: 'string' }, mode } } } } },
      responses: { 200: json(ref('Tokens')), ...errorsOf('INVALID_PAYLOAD', 'INVALID_CREDENTIALS') },
    },
  };
  paths['/auth/logout'] = {
    post: {
      operationId: 'logout',
      tags: ['auth'],
      security: [],
      requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { refresh_token: { type: 'string' } } } } } },
      responses: { 204: { description: 'Logged out' }, ...errorsOf('INVALID_PAYLOAD') },
    },
  };
  paths['/server/ping'] = {
    get: {
      operationId: 'ping',
      tags: ['server'],
      security: [],
      responses: { 200: { description: 'pong', content: { 'text/plain': { schema: { type: 'string', const: 'pong' } } } } },
    },
  };
  paths['/server/health'] = {
    get: {
      operationId: 'health',
      tags: ['server'],
      security: [],
      responses: {
        200: {
          description: 'ok or warn (checks for operators only)',
          content: {
            'application/health+json': {
              schema: { type: 'object', required: ['status'], properties: { status: { enum: ['ok', 'warn', 'error'] }, checks: { type: 'object' } } },
            },
          },
        },
        503: { description: 'error' },
      },
    },
  };
  Object.assign(paths, schemaPaths());
  return {
    openapi: '3.1.0',
    info: {
      title: 'Legacy video-rendering API (served by the compatibility gateway)',
      version: '1.0.0',
      description: 'Directus-style legacy interface, translated onto the v1 API.',
    },
    components: {
      schemas,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A JWT from /auth/login, or a static token' } },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

/** Directus's schema routes (src/schema/directus-schema.ts) and /server/info. */
function schemaPaths(): Record<string, Json> {
  const collectionParam = { name: 'collection', in: 'path', required: true, schema: { type: 'string' } };
  const fieldParam = { name: 'field', in: 'path', required: true, schema: { type: 'string' } };
  const described = (what: string) => ({ type: 'object', required: ['collection'], properties: { collection: { type: 'string' } }, description: what });
  const op = (operationId: string, data: Json, parameters: Json[] = []): Json => ({
    get: {
      operationId, tags: ['schema'], parameters,
      responses: { 200: json({ type: 'object', required: ['data'], properties: { data } }), ...errorsOf('FORBIDDEN') },
    },
  });
  const many = (what: string) => ({ type: 'array', items: described(what) });
  return {
    '/collections': op('readCollections', many('a legacy collection')),
    '/collections/{collection}': op('readCollection', described('a legacy collection'), [collectionParam]),
    '/fields': op('readFields', many('a field, with its type, column facts (schema) and meta')),
    '/fields/{collection}': op('readCollectionFields', many('a field'), [collectionParam]),
    '/fields/{collection}/{field}': op('readField', described('a field'), [collectionParam, fieldParam]),
    '/relations': op('readRelations', many('a many-to-one relation and its one-to-many alias')),
    '/relations/{collection}': op('readCollectionRelations', many('a relation whose many side is the collection'), [collectionParam]),
    '/server/info': {
      get: {
        operationId: 'serverInfo', tags: ['server'], security: [{}, { bearer: [] }],
        responses: { 200: json({ type: 'object', required: ['data'], properties: { data: { type: 'object', required: ['project'] } } }) },
      },
    },
  };
}
