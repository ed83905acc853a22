import { z } from 'zod';
import {
  CreateRenderBodySchema,
  V1ErrorSchema,
  V1MemberListSchema,
  V1ProjectPageSchema,
  V1ProjectSchema,
  V1RenderPageSchema,
  V1RenderSchema,
  V1TeamListSchema,
  V1TeamSchema,
  V1TemplateListSchema,
  V1TemplateSchema,
  V1UserSchema,
  V1ValidationErrorSchema,
} from '../v1/schemas.js';

/** zod writes `format: "starts_with"` beside the `pattern` of a prefixed id: not a JSON Schema format, so it is dropped. */
function standard(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(standard);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) if (!(k === 'format' && v === 'starts_with')) out[k] = standard(v);
  return out;
}
const json = (schema: z.ZodType) => ({ content: { 'application/json': { schema: standard(z.toJSONSchema(schema, { target: 'draft-2020-12' })) } } });
const err = (description: string) => ({ description, ...json(V1ErrorSchema) });
const q = (name: string, required: boolean, schema: Record<string, unknown>) => ({ name, in: 'query', required, schema });
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', minLength: 1 } };
const listParams = [
  q('limit', false, { type: 'integer', minimum: 1, default: 20 }),
  q('cursor', false, { type: 'string' }),
  q('search', false, { type: 'string' }),
  q('order', false, { type: 'string', enum: ['asc', 'desc'], default: 'desc' }),
];
const common = { 401: err('No API key, or an invalid key'), 500: err('Fault on the service side') };

/** The OpenAPI 3.1 description the simulator serves at /openapi.json, generated from the v1 zod contract. */
export function openApiDocument(serverUrl = '/'): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Video Rendering Service API (simulator)', version: '1.0.0' },
    servers: [{ url: serverUrl }],
    components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } },
    security: [{ apiKey: [] }],
    paths: {
      '/v1/renders': {
        get: {
          operationId: 'listRenders',
          parameters: [
            q('project_id', true, { type: 'string', minLength: 1 }),
            ...listParams,
            q('status', false, { type: 'string', enum: [...V1RenderSchema.shape.status.options] }),
          ],
          responses: {
            200: { description: 'A page of renders', ...json(V1RenderPageSchema) },
            400: err('Bad cursor'),
            404: err('Project not found'),
            422: { description: 'Validation failed', ...json(V1ValidationErrorSchema) },
            ...common,
          },
        },
        post: {
          operationId: 'createRender',
          requestBody: { required: true, ...json(CreateRenderBodySchema) },
          responses: {
            201: { description: 'The render', ...json(V1RenderSchema) },
            400: err('Invalid request data'),
            402: err('Out of credits'),
            404: err('Project not found'),
            422: { description: 'Validation failed', ...json(V1ValidationErrorSchema) },
            ...common,
          },
        },
      },
      '/v1/renders/{id}': {
        get: {
          operationId: 'getRender',
          parameters: [idParam],
          responses: { 200: { description: 'The render', ...json(V1RenderSchema) }, 404: err('Not found'), ...common },
        },
      },
      '/v1/projects': {
        get: {
          operationId: 'listProjects',
          parameters: [q('team_id', true, { type: 'string', minLength: 1 }), ...listParams],
          responses: {
            200: { description: 'A page of projects', ...json(V1ProjectPageSchema) },
            400: err('Bad cursor'),
            404: err('Team not found'),
            422: { description: 'Validation failed', ...json(V1ValidationErrorSchema) },
            ...common,
          },
        },
      },
      '/v1/projects/{id}': {
        get: {
          operationId: 'getProject',
          parameters: [idParam],
          responses: { 200: { description: 'The project', ...json(V1ProjectSchema) }, 404: err('Not found'), ...common },
        },
      },
      '/v1/templates': {
        get: {
          operationId: 'listTemplates',
          parameters: [q('project_id', true, { type: 'string', minLength: 1 })],
          responses: {
            200: { description: 'Templates', ...json(V1TemplateListSchema) },
            404: err('Project not found'),
            422: { description: 'Validation failed', ...json(V1ValidationErrorSchema) },
            ...common,
          },
        },
      },
      '/v1/templates/{id}': {
        get: {
          operationId: 'getTemplate',
          parameters: [idParam, q('project_id', true, { type: 'string', minLength: 1 })],
          responses: { 200: { description: 'The template', ...json(V1TemplateSchema) }, 404: err('Not found'), ...common },
        },
      },
      '/v1/teams': { get: { operationId: 'listTeams', responses: { 200: { description: 'Teams', ...json(V1TeamListSchema) }, ...common } } },
      '/v1/teams/{id}': {
        get: {
          operationId: 'getTeam',
          parameters: [idParam],
          responses: { 200: { description: 'The team', ...json(V1TeamSchema) }, 404: err('Not found'), ...common },
        },
      },
      '/v1/me': { get: { operationId: 'getMe', responses: { 200: { description: 'The caller', ...json(V1UserSchema) }, ...common } } },
      '/v1/users': {
        get: {
          operationId: 'listUsers',
          parameters: [q('team_id', true, { type: 'string', minLength: 1 })],
          responses: {
            200: { description: 'Members', ...json(V1MemberListSchema) },
            404: err('Team not found'),
            422: { description: 'Validation failed', ...json(V1ValidationErrorSchema) },
            ...common,
          },
        },
      },
      '/v1/users/{id}': {
        get: {
          operationId: 'getUser',
          parameters: [idParam],
          responses: { 200: { description: 'The user', ...json(V1UserSchema) }, 404: err('Not found'), ...common },
        },
      },
    },
  };
}
