import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { percentDecoded } from '../../src/lib/percent.js';
import { parseCookies } from '../../src/auth/request-token.js';
import { parseQueryString } from '../../src/query/querystring.js';

/** What decodeURIComponent gives, undefined where it throws. */
const reference = (s: string): string | undefined => { try { return decodeURIComponent(s); } catch { return undefined; } };

describe('percentDecoded', () => {
  it('is decodeURIComponent, undefined where it throws: bad escapes, bytes that are no UTF-8, surrogates, overlong forms', () => {
    for (const s of ['%', '%E0', '%E0%A0%80', '%ED%A0%80', '%F4%90%80%80', '%C0%80', '%41%E0', 'a%2', '%C3%A9x%C3', '%F0%9F%8E%AC', '%e2%82%ac', 'plain', '%zz'])
      expect(percentDecoded(s), s).toBe(reference(s));
    const hex = fc.constantFrom(...'0123456789abcdefABCDEF89'.split(''));
    const piece = fc.oneof(
      fc.string({ maxLength: 3 }), fc.tuple(hex, hex).map(([a, b]) => `%${a}${b}`), fc.constant('%'),
      fc.constantFrom('%C3', '%A9', '%E2', '%82', '%AC', '%F0', '%9F', '%ED', '%A0', '%80', '%BF', '%F4', '%90', '%C0'),
    );
    fc.assert(fc.property(fc.array(piece, { maxLength: 12 }), (ps) => { const s = ps.join(''); expect(percentDecoded(s)).toBe(reference(s)); }), { numRuns: 20_000 });
  });

  it('the query string and cookies read malformed escapes as they are, without an exception (attack pass 30, H-1: ~7 µs each)', () => {
    const original = globalThis.decodeURIComponent;
    let thrown = 0;
    const spy = vi.spyOn(globalThis, 'decodeURIComponent').mockImplementation((s) => { try { return original(s); } catch (e) { thrown++; throw e; } });
    try {
      const q = parseQueryString(`${Array(400).fill('%=1').join('&')}&${Array(400).fill('%E0x=%E0').join('&')}&ok=%C3%A9`);
      expect(q['%']).toEqual(Array(400).fill('1'));
      expect(q['%E0x']).toEqual(Array(400).fill('%E0'));
      expect(q.ok).toBe('é');
      const cookies = parseCookies(`${Array(300).fill('a=%').join('; ')}; s=%E0; t=%41`);
      expect(cookies).toMatchObject({ a: '%', s: '%E0', t: 'A' });
      expect(thrown).toBe(0);
    } finally { spy.mockRestore(); }
  });
});
