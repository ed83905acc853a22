import type { Mappings } from '../config/mappings.js';

export interface FieldCoverage {
  resource: string;
  field: string;
  type: string;
  source: string;
  from: string | null;
  how: string | null;
  write: string;
  noV1Source: boolean;
}

/** What the legacy role (permissions.json) may set: `collection.field` on create and on update. */
export interface RoleCoverage {
  create: string[];
  update: string[];
}

/** The migration team's checklist: every legacy field, where its value comes from, how PATCH treats it, what the role may set. */
export function mappingReport(m: Mappings): { fields: FieldCoverage[]; noV1Source: string[]; overlays: string[]; role: RoleCoverage } {
  const fields: FieldCoverage[] = [];
  for (const [resource, r] of Object.entries(m.resources)) {
    for (const [field, f] of Object.entries(r.fields)) {
      fields.push({
        resource,
        field,
        type: f.type,
        source: f.source.kind,
        from: f.source.from ?? null,
        how: f.source.how ?? null,
        write: f.write ?? 'reject',
        noV1Source: f.source.kind === 'none',
      });
    }
  }
  return {
    fields,
    noV1Source: fields.filter((f) => f.noV1Source).map((f) => `${f.resource}.${f.field}`),
    overlays: fields.filter((f) => f.write === 'overlay').map((f) => `${f.resource}.${f.field}`),
    role: roleCoverage(m),
  };
}

function roleCoverage(m: Mappings): RoleCoverage {
  const perms = Object.entries(m.permissions ?? {});
  return {
    create: perms.flatMap(([c, p]) => p.create.map((f) => `${c}.${f}`)),
    update: perms.flatMap(([c, p]) => p.update.map((f) => `${c}.${f}`)),
  };
}

export function mappingReportText(m: Mappings): string {
  const r = mappingReport(m);
  const lines = ['resource.field                 type       source   write    from / how'];
  for (const f of r.fields) {
    lines.push(
      `${`${f.resource}.${f.field}`.padEnd(30)} ${f.type.padEnd(10)} ${f.source.padEnd(8)} ${f.write.padEnd(8)} ` +
        `${[f.from, f.how].filter(Boolean).join(' — ')}`,
    );
  }
  lines.push(
    '',
    `No v1 source (${r.noV1Source.length}): ${r.noV1Source.join(', ')}`,
    `Kept by the gateway on PATCH (overlay): ${r.overlays.join(', ')}`,
    `The legacy role may set on create: ${r.role.create.join(', ') || '(nothing)'}; on update: ${r.role.update.join(', ') || '(nothing)'}`,
  );
  return lines.join('\n');
}
