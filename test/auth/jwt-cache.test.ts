import { describe, expect, it } from 'vitest';
import { JwtService } from '../../src/auth/jwt.js';
import { GatewayError } from '../../src/errors/catalog.js';
import { ManualClock } from '../../src/lib/clock.js';

const claims = { id: 'u1', role: 'r1', app_access: true, admin_access: false };

describe('verified tokens remembered until they expire', () => {
  it('a remembered token still expires on time, by the injected clock', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const jwt = await JwtService.create({ issuer: 'directus', ttlMs: 60_000, alg: 'HS256', secret: 's'.repeat(40), clock });
    const token = await jwt.sign(claims);
    expect(await jwt.verify(token)).toEqual(claims);
    clock.advance(59_000);
    expect(await jwt.verify(token)).toEqual(claims); // from memory
    clock.advance(1_000);
    await expect(jwt.verify(token)).rejects.toMatchObject({ code: 'TOKEN_EXPIRED' });
  });
  it('a token with a forged signature is refused even when its twin was verified', async () => {
    const jwt = await JwtService.create({ issuer: 'directus', ttlMs: 60_000, alg: 'HS256', secret: 's'.repeat(40) });
    const token = await jwt.sign(claims);
    await jwt.verify(token);
    const [h, p] = token.split('.');
    const forged = `${h}.${p}.${'A'.repeat(43)}`;
    const err = await jwt.verify(forged).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('INVALID_TOKEN');
  });
});
