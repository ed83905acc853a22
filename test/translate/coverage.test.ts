import { describe, expect, it } from 'vitest';
import { loadMappings, type Mappings } from '../../src/config/mappings.js';
import { mappingReport, mappingReportText } from '../../src/translate/coverage.js';

/** A small hand-written mapping: only `resources` is read by the report. */
const mappings = {
  resources: {
    widget: {
      collection: 'widgets',
      v1: 'widgets',
      defaultSort: ['id'],
      fields: {
        id: { type: 'uuid', source: { kind: 'derived', from: 'id', how: 'uuid v5' } },
        title: { type: 'string', source: { kind: 'v1', from: 'name' }, write: 'overlay' },
        colour: { type: 'string', source: { kind: 'none', value: null }, write: 'readonly' },
      },
    },
    gadget: {
      collection: 'gadgets',
      v1: 'gadgets',
      defaultSort: ['id'],
      fields: {
        note: { type: 'text', source: { kind: 'store', how: 'kept by the gateway' }, write: 'overlay' },
        legacy: { type: 'json', source: { kind: 'none' } },
      },
    },
  },
} as unknown as Mappings;

describe('mapping report', () => {
  it('lists every field with its source, defaults (write: reject, from/how: null) and the two summaries', () => {
    const r = mappingReport(mappings);
    expect(r.fields).toEqual([
      { resource: 'widget', field: 'id', type: 'uuid', source: 'derived', from: 'id', how: 'uuid v5', write: 'reject', noV1Source: false },
      { resource: 'widget', field: 'title', type: 'string', source: 'v1', from: 'name', how: null, write: 'overlay', noV1Source: false },
      { resource: 'widget', field: 'colour', type: 'string', source: 'none', from: null, how: null, write: 'readonly', noV1Source: true },
      { resource: 'gadget', field: 'note', type: 'text', source: 'store', from: null, how: 'kept by the gateway', write: 'overlay', noV1Source: false },
      { resource: 'gadget', field: 'legacy', type: 'json', source: 'none', from: null, how: null, write: 'reject', noV1Source: true },
    ]);
    expect(r.noV1Source).toEqual(['widget.colour', 'gadget.legacy']);
    expect(r.overlays).toEqual(['widget.title', 'gadget.note']);
  });

  it('names what the legacy role of mappings/permissions.json may set on create and on update', () => {
    const r = mappingReport(loadMappings('mappings'));
    expect(r.role).toEqual({ create: ['renders.project', 'renders.account', 'renders.data', 'renders.title'], update: ['renders.title', 'projects.title', 'accounts.name'] });
    expect(mappingReportText(loadMappings('mappings'))).toContain('The legacy role may set on create: renders.project, renders.account, renders.data, renders.title; on update:');
  });

  it('is empty for a mapping without resources', () => {
    expect(mappingReport({ resources: {} } as unknown as Mappings)).toEqual({ fields: [], noV1Source: [], overlays: [], role: { create: [], update: [] } });
  });

  it('prints one padded line per field, "from — how" joined without the missing parts, then the summaries', () => {
    const lines = mappingReportText(mappings).split('\n');
    const row = (name: string, type: string, source: string, write: string, rest: string) =>
      name + ' '.repeat(30 - name.length) + ' ' + type + ' '.repeat(10 - type.length) + ' ' + source + ' '.repeat(8 - source.length) + ' ' + write + ' '.repeat(8 - write.length) + ' ' + rest;
    expect(lines).toEqual([
      'resource.field                 type       source   write    from / how',
      row('widget.id', 'uuid', 'derived', 'reject', 'id — uuid v5'),
      row('widget.title', 'string', 'v1', 'overlay', 'name'),
      row('widget.colour', 'string', 'none', 'readonly', ''),
      row('gadget.note', 'text', 'store', 'overlay', 'kept by the gateway'),
      row('gadget.legacy', 'json', 'none', 'reject', ''),
      '',
      'No v1 source (2): widget.colour, gadget.legacy',
      'Kept by the gateway on PATCH (overlay): widget.title, gadget.note',
      'The legacy role may set on create: (nothing); on update: (nothing)',
    ]);
    // the columns line up: the type column starts at 31 on every field line
    for (const l of lines.slice(1, 6)) expect(l[30]).toBe(' ');
  });
});
