import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, scrubText } from '../../src/log/logger.js';

describe('pino redaction', () => {
  it('censors credentials, tokens and keys wherever they appear', () => {
    const lines: string[] = [];
    const log = createLogger('info', new Writable({ write(c, _e, cb) { lines.push(c.toString()); cb(); } }));
    const key = 'sk_' + 'Z'.repeat(32);
    log.info({ req: { method: 'GET', url: `/renders?access_token=abc.def.ghi&x=1`, headers: { authorization: 'Bearer secret-jwt' } } }, 'r');
    log.info({ password: 'hunter2', body: { password: 'hunter3', refresh_token: 'rt-1', access_token: 'at-1' }, apiKey: key, headers: { authorization: 'Bearer x' } }, 'o');
    log.error({ err: new Error(`v1 refused Bearer ${key}`) }, 'e');
    const all = lines.join('');
    for (const secret of ['hunter2', 'hunter3', 'rt-1', 'at-1', 'secret-jwt', 'abc.def.ghi', key]) expect(all).not.toContain(secret);
    expect(all).toContain('[Redacted]');
  });
  it('scrubs free text', () => {
    expect(scrubText('a sk_' + 'a'.repeat(32) + ' b')).toBe('a sk_[Redacted] b');
    expect(scrubText('/x?password=p&refresh_token=r')).toBe('/x?password=[Redacted]&refresh_token=[Redacted]');
  });
});

describe('redaction after decoding', () => {
  it('redacts a credential parameter whatever the spelling of its name', () => {
    const token = 'static-token-abcdef0123456789';
    for (const name of ['access_token', '%61ccess_token', 'access%5Ftoken', 'access%5ftoken', '%61%63%63%65%73%73%5f%74%6f%6b%65%6e', 'ACCESS_TOKEN',
      'access_token[]', 'access_token%5B0%5D', 'password', 'pass%77ord', 'refresh%5Ftoken']) {
      const out = scrubText(`/renders?x=1&${name}=${token}&y=2`);
      expect(out, name).not.toContain(token);
      expect(out).toContain('x=1');
      expect(out).toContain('y=2');
    }
  });
  it('keeps ordinary parameters as they are', () => {
    expect(scrubText('/renders?filter[title][_eq]=a&fields=id,title')).toBe('/renders?filter[title][_eq]=a&fields=id,title');
  });
});
