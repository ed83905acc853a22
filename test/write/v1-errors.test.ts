import { describe, expect, it } from 'vitest';
import { fromV1Error } from '../../src/errors/v1-errors.js';
import { errorForStatus, V1NetworkError } from '../../src/v1/errors.js';

describe('v1 errors in the legacy envelope', () => {
  it.each([
    [402, 402, 'PAYMENT_REQUIRED'],
    [400, 400, 'INVALID_PAYLOAD'],
    [422, 400, 'INVALID_PAYLOAD'],
    [404, 403, 'FORBIDDEN'],
    [403, 403, 'FORBIDDEN'],
    [401, 401, 'INVALID_CREDENTIALS'],
    [500, 503, 'SERVICE_UNAVAILABLE'],
    [429, 503, 'SERVICE_UNAVAILABLE'],
  ])('v1 %i → %i %s', (v1, status, code) => {
    const body = v1 === 422 ? { error: 'Validation failed.', message: 'name: too short', details: [{ field: 'name', message: 'name: too short', code: 'too_small' }] } : { error: 'x' };
    const e = fromV1Error(errorForStatus(v1, 'POST', '/v1/renders', body, undefined));
    expect(e.status).toBe(status);
    expect(e.code).toBe(code);
    if (v1 === 422) expect(e.extensions.details).toEqual([{ field: 'name', message: 'name: too short', code: 'too_small' }]);
  });
  it('network failures → 503', () => {
    expect(fromV1Error(new V1NetworkError('x', 'GET', '/v1/me', true, null)).code).toBe('SERVICE_UNAVAILABLE');
  });
});
