import { z } from 'zod';

/**
 * The v1 contract as zod schemas. The client validates every answer with them (unknown extra fields are
 * tolerated; unknown enum values are named in a clear error) and the simulator's OpenAPI document is
 * generated from them, so both sides read one contract.
 */
export const RENDER_STATUSES = ['initializing', 'ready', 'queued', 'processing', 'finalizing', 'complete', 'failed'] as const;
export type RenderStatus = (typeof RENDER_STATUSES)[number];
export const FINAL_STATUSES: ReadonlySet<RenderStatus> = new Set(['complete', 'failed']);
/** A render's place in its lifecycle: it never moves back (complete and failed are final). */
export const LIFECYCLE_RANK: Readonly<Record<RenderStatus, number>> = {
  initializing: 0, ready: 1, queued: 2, processing: 3, finalizing: 4, complete: 5, failed: 5,
};

const enumOf = <T extends readonly [string, ...string[]]>(values: T, what: string) =>
  z.enum(values, {
    error: (iss) => `unknown ${what} value ${JSON.stringify(iss.input)} (known: ${values.join(', ')})`,
  });

export const RenderStatusSchema = enumOf(RENDER_STATUSES as unknown as [RenderStatus, ...RenderStatus[]], 'render status');
export const RenderTypeSchema = enumOf(['local', 'cloud'] as const, 'render type');
export const RoleSchema = enumOf(['admin', 'member'] as const, 'role');

export const V1RenderSchema = z.object({
  id: z.string().startsWith('rend_'),
  name: z.string(),
  status: RenderStatusSchema,
  type: RenderTypeSchema,
  project: z.object({ id: z.string(), team: z.string() }),
  output: z.record(z.string(), z.string()).optional(),
  created_by: z.string().nullable(),
  created_at: z.number(),
  updated_at: z.number().nullable(),
});
export type V1Render = z.infer<typeof V1RenderSchema>;

export const V1ProjectSchema = z.object({
  id: z.string().startsWith('proj_'),
  name: z.string(),
  team: z.object({ id: z.string(), name: z.string() }),
  created_by: z.string().nullable(),
  thumbnail_url: z.string().nullable(),
  created_at: z.number(),
  updated_at: z.number().nullable(),
});
export type V1Project = z.infer<typeof V1ProjectSchema>;

export const V1TemplateSummarySchema = z.object({
  id: z.string().startsWith('tpl_'),
  name: z.string(),
  description: z.string().nullable(),
  project_id: z.string(),
  target_composition_id: z.string(),
  field_count: z.number(),
});
export type V1TemplateSummary = z.infer<typeof V1TemplateSummarySchema>;

export const V1TemplateFieldSchema = z.object({
  key: z.string(),
  label: z.string().nullable(),
  description: z.string().nullable(),
  kind: z.string(),
  widget: z.string().nullable(),
  default_value: z.union([z.string(), z.number(), z.boolean(), z.null()]),
});

export const V1TemplateSchema = V1TemplateSummarySchema.extend({ fields: z.array(V1TemplateFieldSchema) });
export type V1Template = z.infer<typeof V1TemplateSchema>;

export const V1TeamSchema = z.object({
  id: z.string().startsWith('team_'),
  name: z.string(),
  account_id: z.string().startsWith('acc_'),
  role: RoleSchema.nullable(),
  created_at: z.number(),
});
export type V1Team = z.infer<typeof V1TeamSchema>;

export const V1UserSchema = z.object({
  id: z.string().startsWith('user_'),
  email: z.string().nullable(),
  created_at: z.number(),
});
export type V1User = z.infer<typeof V1UserSchema>;

export const V1TeamMemberSchema = V1UserSchema.extend({ role: RoleSchema, joined_at: z.number() });
export type V1TeamMember = z.infer<typeof V1TeamMemberSchema>;

export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });
export const listOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item) });

export const V1RenderPageSchema = pageOf(V1RenderSchema);
export const V1ProjectPageSchema = pageOf(V1ProjectSchema);
export const V1TemplateListSchema = listOf(V1TemplateSummarySchema);
export const V1TeamListSchema = listOf(V1TeamSchema);
export const V1MemberListSchema = listOf(V1TeamMemberSchema);

export interface Page<T> {
  readonly data: readonly T[];
  readonly has_more: boolean;
  readonly next_cursor: string | null;
}

export const V1ErrorSchema = z.object({ error: z.string() });
export const V1ValidationErrorSchema = z.object({
  error: z.string(),
  message: z.string(),
  details: z.array(z.object({ field: z.string(), message: z.string(), code: z.string() })),
});
export type V1ValidationDetail = z.infer<typeof V1ValidationErrorSchema>['details'][number];

export const CreateRenderBodySchema = z.object({
  name: z.string().min(1).max(250),
  project_id: z.string().min(1),
  template_id: z.string().min(1).optional(),
  values: z.record(z.string(), z.unknown()).optional(),
});
export type CreateRenderBody = z.infer<typeof CreateRenderBodySchema>;

export const WebhookEventSchema = z.object({
  id: z.string().startsWith('hook_'),
  event: enumOf(['render.status_changed', 'render.complete', 'render.failed'] as const, 'webhook event'),
  data: V1RenderSchema,
  timestamp: z.number(),
});
export type WebhookEvent = z.infer<typeof WebhookEventSchema>;

/** The largest page v1 gives (a larger `limit` is clamped to it). */
export const V1_PAGE_MAX = 60;
