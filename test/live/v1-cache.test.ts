import { describe, expect, it } from 'vitest';
import { V1Cache } from '../../src/live/v1-cache.js';

describe('V1Cache lifetimes', () => {
  const cache = new V1Cache({ metadataMs: 60_000, renderActiveMs: 2_000, renderFinalMs: 300_000, signedUrlMs: 45_000 });
  it('caps final renders (which carry signed URLs) at SIGNED_URL_TTL_MS', () => {
    expect(cache.renderTtl({ status: 'complete' })).toBe(45_000);
    expect(cache.renderTtl({ status: 'failed' })).toBe(45_000);
    expect(new V1Cache({ metadataMs: 1, renderActiveMs: 2, renderFinalMs: 10_000, signedUrlMs: 900_000 }).renderTtl({ status: 'complete' })).toBe(10_000);
  });
  it('keeps moving renders only briefly', () => {
    expect(cache.renderTtl({ status: 'processing' })).toBe(2_000);
  });
  it('partitions entries per key', () => {
    cache.set('key-a', 'render:r1', { v: 1 }, 1000);
    expect(cache.get('key-a', 'render:r1')).toEqual({ v: 1 });
    expect(cache.get('key-b', 'render:r1')).toBeUndefined();
  });
});
