import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isUuid, uuidV5 } from '../../src/lib/uuid.js';

const DNS = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';

/** The textbook construction (a Hash object, bytes patched), to check the fast one against. */
function reference(name: string, namespace: string): string {
  const h = createHash('sha1').update(Buffer.from(namespace.replace(/-/g, ''), 'hex')).update(name, 'utf8').digest();
  h[6] = ((h[6] as number) & 0x0f) | 0x50;
  h[8] = ((h[8] as number) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

describe('uuid v5', () => {
  it('matches the RFC 9562 example (www.example.com in the DNS namespace)', () => {
    expect(uuidV5('www.example.com', DNS)).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });
  it('equals the textbook construction for any name and namespace, and is a valid version-5 uuid', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), fc.uuid(), (name, ns) => {
      const u = uuidV5(name, ns);
      expect(u).toBe(reference(name, ns));
      expect(isUuid(u)).toBe(true);
      expect(u[14]).toBe('5');
      expect('89ab').toContain(u[19]);
    }), { numRuns: 2000 });
  });
});
