import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NO_OUTPUT, OutputCodec } from '../../src/replica/team/output-codec.js';

const hex = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: n, maxLength: n });
const renderId = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'), minLength: 6, maxLength: 20 }).map((s) => `rend_${s}`);

/** URLs as CDNs sign them: the simulator's shape, S3's, odd ones. */
const url = (id: string) => fc.oneof(
  fc.tuple(fc.constantFrom('1080p.mp4', 'master.mov', 'still.jpg'), fc.integer({ min: 1_700_000_000, max: 1_900_000_000 }), hex(32))
    .map(([f, e, s]) => `https://cdn.example/renders/${id}/${f}?expires=${e}&signature=${s}`),
  fc.tuple(fc.string({ minLength: 16, maxLength: 40 }), fc.constantFrom('X-Amz-Signature', 'sig'))
    .map(([s, k]) => `https://s3.example/b/${id}.mp4?X-Amz-Date=20261123T101010Z&X-Amz-Expires=3600&${k}=${encodeURIComponent(s)}`),
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.string(),
);

describe('output codec', () => {
  it('gives back exactly the URLs it was given, variant order included (any URL, any id)', () => {
    const codec = new OutputCodec();
    fc.assert(fc.property(renderId.chain((id) => fc.tuple(fc.constant(id), fc.dictionary(fc.constantFrom('master', '1080p', '720p', 'still', 'gif_preview', 'x'), url(id)))),
      ([id, output]) => {
        const packed = codec.encode(id, output);
        expect(codec.decode(id, packed)).toEqual(output);
        expect(Object.keys(codec.decode(id, packed) ?? {})).toEqual(Object.keys(output));
        expect(codec.variantsKey(packed)).toBe(Object.keys(output).sort().join(','));
        for (const v of ['master', 'still', 'nope']) expect(codec.has(packed, v)).toBe(Object.hasOwn(output, v));
      }), { numRuns: 400 });
    expect(codec.decode('rend_x', NO_OUTPUT)).toBeUndefined();
    expect(codec.encode('rend_x', undefined)).toBe(NO_OUTPUT);
  });

  it('keeps only the signature of a signed URL, packed two hex digits to a character; the rest is shared', () => {
    const codec = new OutputCodec();
    const sig = 'ab'.repeat(16);
    const out = (id: string) => ({
      master: `https://cdn.example/renders/${id}/master.mov?expires=1790000000&signature=${sig}`,
      '1080p': `https://cdn.example/renders/${id}/1080p.mp4?expires=1790000000&signature=${'0f'.repeat(16)}`,
    });
    const a = codec.encode('rend_aaaaaa', out('rend_aaaaaa'));
    const b = codec.encode('rend_bbbbbb', out('rend_bbbbbb'));
    expect(a.shape).toBe(b.shape);
    expect(a.exp).toBe(1790000000);
    expect(a.rest).toHaveLength(32); // two 32-digit signatures, 16 characters each
    expect(codec.decode('rend_bbbbbb', b)).toEqual(out('rend_bbbbbb'));
    // a signature that is not hexadecimal is kept as it is
    const c = codec.encode('rend_c', { master: `https://cdn.example/renders/rend_c/m.mov?expires=1790000000&signature=${'Z'.repeat(20)}` });
    expect(c.rest).toBe('Z'.repeat(20));
  });

  it('keeps URLs whole once it has learned too many templates, or when they hold its placeholder characters', () => {
    const codec = new OutputCodec();
    for (let i = 0; i < 600; i++) {
      const output = { master: `https://host${i}.example/${i}/m.mov?expires=1790000000&signature=${'ab'.repeat(16)}` };
      const p = codec.encode(`rend_${i}`, output);
      if (i >= 512) expect(p.shape).toBe(-2);
      expect(codec.decode(`rend_${i}`, p)).toEqual(output);
    }
    const odd = { master: 'https://x.example/\u0001?expires=1790000000' };
    expect(new OutputCodec().encode('rend_1', odd).shape).toBe(-2);
  });
});
