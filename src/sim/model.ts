import type { RenderStatus } from '../v1/schemas.js';

/** The simulator's internal records (times in milliseconds; the API shows seconds). */
export interface SimAccount { id: string; name: string; admins: string[] }
export interface SimPerson { id: string; email: string | null; createdAt: number; name: string }
export interface SimKey { key: string; userId: string; name: string; revoked: boolean }
export interface SimMember { userId: string; role: 'admin' | 'member'; joinedAt: number }
export interface SimWebhook { id: string; url: string; secret: string; events: string[] }
export interface SimTeam {
  id: string; name: string; accountId: string; createdAt: number; credits: number;
  members: SimMember[]; webhooks: SimWebhook[];
}
export interface SimTemplateField {
  key: string; label: string | null; description: string | null; kind: string; widget: string | null;
  default_value: string | number | boolean | null;
}
export interface SimTemplate {
  id: string; name: string; description: string | null; projectId: string; compositionId: string;
  fields: SimTemplateField[];
}
export interface SimProject {
  id: string; name: string; teamId: string; createdBy: string | null; createdAt: number; updatedAt: number | null;
  hasThumbnail: boolean; templates: SimTemplate[]; config: Record<string, unknown>;
}
export interface SimRender {
  id: string; seq: number; name: string; status: RenderStatus; type: 'local' | 'cloud';
  projectId: string; teamId: string; createdBy: string | null; createdAt: number; updatedAt: number | null;
  /** Output variants the render produces once complete (names only; URLs are signed on each read). */
  variants: string[];
  /** Project configuration copy with template values applied (never shared with the project). */
  config: Record<string, unknown>;
  templateId: string | null;
  /** Future transitions, earliest first. */
  pending: { status: RenderStatus; at: number }[];
}
