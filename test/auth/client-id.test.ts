import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMappings, MappingError } from '../../src/config/mappings.js';
import { clientId, userAgentCacheChars, userAgentFamily } from '../../src/auth/client-id.js';

const F = loadMappings('mappings').userAgentFamilies;

describe('the User-Agent family cache', () => {
  it('holds a bounded number of characters however long and many the User-Agents', () => {
    for (let i = 0; i < 2000; i++) expect(userAgentFamily(`curl/${i}-${'x'.repeat(8000)}`, F)).toBe('curl');
    expect(userAgentCacheChars()).toBeLessThanOrEqual(512 * 256);
    for (let i = 0; i < 2000; i++) userAgentFamily(`my-client/${i}`, F);
    expect(userAgentCacheChars()).toBeLessThanOrEqual(512 * 256);
    expect(userAgentFamily('python-requests/2.31.0', F)).toBe('python-requests');
  });
});

/** A copy of mappings/ with clients.json replaced. */
function withClients(clients: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'mappings-'));
  cpSync('mappings', dir, { recursive: true });
  writeFileSync(join(dir, 'clients.json'), JSON.stringify(clients));
  return dir;
}

describe('User-Agent families are data (mappings/clients.json; issue 39: custom User-Agents all merged into ~other)', () => {
  it("an integration's own User-Agent named as the operator lists it, first match first; the rest as before", () => {
    const own = loadMappings(withClients({ userAgentFamilies: [
      { match: '^acme-sync/', family: 'acme-sync' }, { match: '^acme-', family: 'acme' }, ...loadMappings('mappings').userAgentFamilies.map(([re, family]) => ({ match: re.source, family })),
    ] })).userAgentFamilies;
    expect(clientId({ via: 'jwt', userId: 'u-1' }, 'Acme-Sync/2.1 (nightly)', own)).toBe('user:u-1~acme-sync');
    expect(clientId({ via: 'jwt', userId: 'u-1' }, 'acme-report/1', own)).toBe('user:u-1~acme');
    expect(clientId({ via: 'jwt', userId: 'u-1' }, 'curl/8.5.0', own)).toBe('user:u-1~curl');
    // the shipped list: the same User-Agent is "other"
    expect(clientId({ via: 'jwt', userId: 'u-1' }, 'Acme-Sync/2.1 (nightly)', F)).toBe('user:u-1~other');
    // and classified anew when the list is another
    expect(userAgentFamily('Acme-Sync/2.1 (nightly)', own)).toBe('acme-sync');
  });

  it('a bad list stops the start with every problem named', () => {
    const bad = withClients({ userAgentFamilies: [{ match: '(', family: 'x' }, { match: '^a', family: 'Not OK' }, { match: '^b', family: 'other' }] });
    expect(() => loadMappings(bad)).toThrow(MappingError);
    try { loadMappings(bad); } catch (e) {
      const text = (e as MappingError).problems.join('\n');
      expect(text).toMatch(/clients\.json: userAgentFamilies\.0\.match: is not a regular expression/);
      expect(text).toMatch(/clients\.json: userAgentFamilies\.1\.family: is lower-case/);
      expect(text).toMatch(/clients\.json: userAgentFamilies\.2\.family: "none" and "other" are the report's own names/);
    }
  });
});
