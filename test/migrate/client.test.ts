import { describe, expect, it } from 'vitest';
import { userAgentCacheChars, userAgentFamily } from '../../src/migrate/client.js';

describe('the User-Agent family cache', () => {
  it('holds a bounded number of characters however long and many the User-Agents', () => {
    for (let i = 0; i < 2000; i++) expect(userAgentFamily(`curl/${i}-${'x'.repeat(8000)}`)).toBe('curl');
    expect(userAgentCacheChars()).toBeLessThanOrEqual(512 * 256);
    for (let i = 0; i < 2000; i++) userAgentFamily(`my-client/${i}`);
    expect(userAgentCacheChars()).toBeLessThanOrEqual(512 * 256);
    expect(userAgentFamily('python-requests/2.31.0')).toBe('python-requests');
  });
});
