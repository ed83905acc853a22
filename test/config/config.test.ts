import { describe, expect, it } from 'vitest';
import { loadMappings, MappingError } from '../../src/config/mappings.js';
import { ConfigError, loadConfig, parseDurationMs } from '../../src/config/schema.js';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('configuration', () => {
  it('has defaults for everything in demo mode', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ PORT: 8080, demo: true, ACCESS_TOKEN_TTL: 900_000, REFRESH_TOKEN_TTL: 604_800_000, QUERY_LIMIT_DEFAULT: 100, FANOUT_CONCURRENCY: 8 });
    expect(Object.isFrozen(c)).toBe(true);
  });
  it('lists every problem in one error', () => {
    try {
      loadConfig({ PORT: 'abc', V1_BASE_URL: 'http://v1.internal', ACCESS_TOKEN_TTL: '15 minutes', LOG_LEVEL: 'loud' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const problems = (e as ConfigError).problems.join('\n');
      expect(problems).toMatch(/PORT/);
      expect(problems).toMatch(/ACCESS_TOKEN_TTL/);
      expect(problems).toMatch(/LOG_LEVEL/);
    }
    try {
      loadConfig({ V1_BASE_URL: 'http://v1.internal', ENCRYPTION_KEY: 'short' });
      expect.unreachable();
    } catch (e) {
      expect((e as ConfigError).problems).toEqual(expect.arrayContaining([expect.stringMatching(/^JWT_SECRET/), expect.stringMatching(/^ENCRYPTION_KEY: must be 32 bytes/)]));
    }
  });
  it('parses durations', () => {
    expect(parseDurationMs('15m')).toBe(900_000);
    expect(parseDurationMs('7d')).toBe(604_800_000);
    expect(parseDurationMs('250')).toBe(250);
  });
});

describe('mappings', () => {
  it('load and cover every legacy field', () => {
    const m = loadMappings('mappings');
    expect(Object.keys(m.schemas.render!.fields)).toEqual(['id', 'user_created', 'date_created', 'date_updated', 'process_id', 'account', 'project', 'title', 'playback_id', 'download_ready', 'status', 'data', 'output']);
    expect(m.status.toV1.ready).toEqual(['ready', 'queued']);
    expect(m.status.toV1.deleted).toEqual([]);
  });
  it('a bad mapping stops start-up with a clear message', () => {
    const dir = mkdtempSync(join(tmpdir(), 'map-'));
    cpSync('mappings', dir, { recursive: true });
    const statuses = JSON.parse(readFileSync(join(dir, 'statuses.json'), 'utf8'));
    delete statuses.render.toLegacy.queued;
    statuses.render.toLegacy.failed = 'broken';
    writeFileSync(join(dir, 'statuses.json'), JSON.stringify(statuses));
    const resources = JSON.parse(readFileSync(join(dir, 'resources.json'), 'utf8'));
    resources.render.fields.project.relation.resource = 'nowhere';
    writeFileSync(join(dir, 'resources.json'), JSON.stringify(resources));
    expect(() => loadMappings(dir)).toThrow(MappingError);
    try { loadMappings(dir); } catch (e) {
      expect((e as MappingError).problems).toEqual(expect.arrayContaining([
        'statuses.json: render.toLegacy: v1 status "queued" has no legacy status',
        'statuses.json: render.toLegacy.failed: "broken" is not a legacy status',
        'resources.json: render.fields.project: relates to unknown resource "nowhere"',
      ]));
    }
  });
  it('a one-to-many relation the code does not know, or one it knows and the mappings lack, stops start-up (issue 40: relations as a table)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'map-'));
    cpSync('mappings', dir, { recursive: true });
    const resources = JSON.parse(readFileSync(join(dir, 'resources.json'), 'utf8'));
    resources.template.fields.renders = { type: 'alias', relation: { kind: 'o2m', resource: 'render' }, source: { kind: 'derived', from: 'x' } };
    delete resources.account.fields.projects;
    resources.project.fields.renders.relation.resource = 'template';
    writeFileSync(join(dir, 'resources.json'), JSON.stringify(resources));
    let problems: readonly string[] = [];
    try { loadMappings(dir); } catch (e) { problems = (e as MappingError).problems; }
    expect(problems).toEqual(expect.arrayContaining([
      'resources.json: template.fields.renders: a one-to-many relation the gateway does not know (src/query/resources.ts)',
      'resources.json: project.fields.renders: relates to "template", the gateway lists render',
      'resources.json: the one-to-many field account.projects is missing',
    ]));
    expect(problems).toHaveLength(3);
  });
  it('names the field of a malformed resource, and a broken file never hides another file\'s problems', () => {
    const dir = mkdtempSync(join(tmpdir(), 'map-'));
    cpSync('mappings', dir, { recursive: true });
    const resources = JSON.parse(readFileSync(join(dir, 'resources.json'), 'utf8'));
    resources.render.fields.title.type = 'strnig';
    writeFileSync(join(dir, 'resources.json'), JSON.stringify(resources));
    const statuses = JSON.parse(readFileSync(join(dir, 'statuses.json'), 'utf8'));
    statuses.render.toLegacy.failed = 'broken';
    writeFileSync(join(dir, 'statuses.json'), JSON.stringify(statuses));
    writeFileSync(join(dir, 'outputs.json'), '{ not json');
    let problems: readonly string[] = [];
    try { loadMappings(dir); } catch (e) { problems = (e as MappingError).problems; }
    expect(problems.some((p) => p.startsWith('resources.json: render.fields.title.type: '))).toBe(true);
    expect(problems).toContain('statuses.json: render.toLegacy.failed: "broken" is not a legacy status');
    expect(problems.some((p) => p.startsWith('outputs.json: '))).toBe(true);
  });
});

describe('production and demo mode', () => {
  it('refuses demo mode in production, naming V1_BASE_URL', () => {
    let e: ConfigError | undefined;
    try { loadConfig({ NODE_ENV: 'production' }); } catch (x) { e = x as ConfigError; }
    expect(e).toBeInstanceOf(ConfigError);
    expect(e!.problems.join('\n')).toMatch(/^V1_BASE_URL: required in production/m);
  });
  it('listens on loopback in demo mode unless HOST is set; elsewhere HOST keeps its default', () => {
    expect(loadConfig({}).HOST).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).HOST).toBe('0.0.0.0');
    expect(loadConfig({ V1_BASE_URL: 'http://v1.example', ENCRYPTION_KEY: '11'.repeat(32), JWT_SECRET: 'x'.repeat(40) }).HOST).toBe('0.0.0.0');
  });
  it('lists every bad variable at once, schema and cross-variable problems together', () => {
    let e: ConfigError | undefined;
    try { loadConfig({ V1_BASE_URL: 'http://v1.example', PORT: 'abc', ENCRYPTION_KEY: 'short', ROUTE_MODES: '{', MAX_RELATED_ITEMS: '0' }); } catch (x) { e = x as ConfigError; }
    const names = e!.problems.map((p) => p.split(':')[0]);
    expect(names).toEqual(expect.arrayContaining(['PORT', 'ENCRYPTION_KEY', 'ROUTE_MODES', 'MAX_RELATED_ITEMS', 'JWT_SECRET']));
  });
});
