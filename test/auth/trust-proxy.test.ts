import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/schema.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

/**
 * TRUST_PROXY says which hops' X-Forwarded-For to trust. Behind one proxy (`1`), the address counted is the one that
 * proxy saw — the last entry, which it appends — whatever the client wrote before it; `true` trusts the client's own
 * left-most entry, and a varying header dodged the login limiter's per-address count (attack pass 19, F7).
 */
const opened: TestGateway[] = [];
afterAll(async () => { for (const g of opened) await g.close(); });

/** Failed logins for distinct accounts from one client behind the proxy, each with its own forged left-most entry. */
async function failures(gw: TestGateway, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await gw.app.inject({
      method: 'POST', url: '/auth/login', payload: { email: `nobody${i}@example.com`, password: 'wrong password' },
      headers: { 'x-forwarded-for': `10.${i >> 8}.${i & 255}.9, 203.0.113.7` },
    });
    statuses.push(r.statusCode);
  }
  return statuses;
}

describe('TRUST_PROXY', () => {
  it('reads false, a number of proxies, addresses or CIDRs, or true; anything else is named', () => {
    const read = (v: string) => loadConfig({ ...TEST_ENV, V1_BASE_URL: 'http://127.0.0.1:9', TRUST_PROXY: v }).TRUST_PROXY;
    expect(read('false')).toBe(false);
    expect(read('1')).toBe(1);
    expect(read('10.0.0.0/8, 192.168.1.4')).toEqual(['10.0.0.0/8', '192.168.1.4']);
    expect(read('true')).toBe(true);
    expect(read('2001:db8::/32,loopback')).toEqual(['2001:db8::/32', 'loopback']);
    // (attack pass 20: `100` and `1,2` were read as addresses, `abc` and `0.0.0.0/0` passed and failed the start with a stack)
    for (const bad of ['proxy.example', '100', '1,2', 'abc', '0.0.0.0/0', '10.0.0.0/33', '10.0.0.1/8/9']) {
      expect(() => read(bad), bad).toThrow(/TRUST_PROXY/);
    }
  });

  it('behind one proxy (1): a forged X-Forwarded-For does not dodge the per-address count; true lets it (the danger, said)', async () => {
    const one = await startGateway({ TRUST_PROXY: '1', LOGIN_STALL_MS: '0' });
    opened.push(one);
    const max = one.config.LOGIN_MAX_FAILURES * 4;
    const counted = await failures(one, max + 5);
    expect(counted.slice(0, max).every((s) => s === 401)).toBe(true);
    expect(counted.slice(max)).toEqual([429, 429, 429, 429, 429]);
    const all = await startGateway({ TRUST_PROXY: 'true', LOGIN_STALL_MS: '0' });
    opened.push(all);
    expect((await failures(all, max + 5)).every((s) => s === 401)).toBe(true);
  }, 120_000);

  it('counts an IPv6 client by its /64: one host rotating through its addresses does not dodge the per-address count', async () => {
    const one = await startGateway({ TRUST_PROXY: '1', LOGIN_STALL_MS: '0' });
    opened.push(one);
    const max = one.config.LOGIN_MAX_FAILURES * 4;
    const statuses: number[] = [];
    for (let i = 0; i < max + 3; i++) {
      // every attempt from another address of 2001:db8:5:7::/64 (as a proxy appends it), for another account
      const r = await one.app.inject({
        method: 'POST', url: '/auth/login', payload: { email: `v6-${i}@example.com`, password: 'wrong password' },
        headers: { 'x-forwarded-for': `2001:db8:5:7:${(i + 1).toString(16)}::${(i * 7 + 3).toString(16)}` },
      });
      statuses.push(r.statusCode);
    }
    expect(statuses.slice(0, max).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(max)).toEqual([429, 429, 429]);
    // another /64 is another client
    const other = await one.app.inject({
      method: 'POST', url: '/auth/login', payload: { email: 'v6-other@example.com', password: 'wrong password' },
      headers: { 'x-forwarded-for': '2001:db8:5:8::1' },
    });
    expect(other.statusCode).toBe(401);
  }, 120_000);
});
