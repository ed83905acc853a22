import { describe, expect, it } from 'vitest';
import { randomToken } from '../../src/store/crypto.js';

describe('randomToken', () => {
  it('is base64url of the asked length and never starts with "-" (a command line would take it for an option)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const t = randomToken(32);
      expect(t).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/);
      seen.add(t);
    }
    expect(seen.size).toBe(5000);
  });
});
