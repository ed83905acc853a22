import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { accessLogger, createLogger, lazyChildLogger, scrubText } from '../../src/log/logger.js';

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

describe('the access line and request loggers', () => {
  const sink = () => {
    const lines: string[] = [];
    return { lines, log: createLogger('info', new Writable({ write(c, _e, cb) { lines.push(...c.toString().split('\n').filter(Boolean)); cb(); } })) };
  };

  it("writes pino's line format with the URL scrubbed, and nothing below the level", async () => {
    const { lines, log } = sink();
    const access = accessLogger(log);
    access({ reqId: 'r-1', method: 'GET', url: '/renders?limit=1&access_token=eyJ.secret.x', ip: '127.0.0.1', statusCode: 200, responseTime: 1.5 }, false);
    access({ reqId: 'r-2', method: 'GET', url: '/_gateway/webhooks/v1/team_x', ip: '127.0.0.1', statusCode: 204, responseTime: 0.2 }, true);
    access({ reqId: 'r-"3', method: 'GET', url: '/x"y', ip: undefined as unknown as string, statusCode: 500, responseTime: Number.NaN }, false);
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0]!);
    expect(first).toMatchObject({
      level: 30, reqId: 'r-1', req: { id: 'r-1', method: 'GET', url: '/renders?limit=1&access_token=[Redacted]', ip: '127.0.0.1' },
      res: { statusCode: 200 }, responseTime: 1.5, msg: 'request completed',
    });
    expect(typeof first.time).toBe('number');
    // whatever the values, the line is JSON
    expect(JSON.parse(lines[1]!)).toMatchObject({ reqId: 'r-"3', req: { url: '/x"y' }, responseTime: null });
    log.level = 'debug';
    access({ reqId: 'r-4', method: 'POST', url: '/_gateway/webhooks/v1/team_x', ip: '::1', statusCode: 204, responseTime: 0.2 }, true);
    expect(lines).toHaveLength(2); // gathered until the end of the turn (or a flush: on close)
    access.flush();
    await new Promise((r) => setImmediate(r));
    expect(JSON.parse(lines[2]!)).toMatchObject({ level: 20, reqId: 'r-4' });
  });

  it('gathers the lines of a turn into one write', async () => {
    const writes: string[] = [];
    const log = createLogger('info', new Writable({ write(c, _e, cb) { writes.push(c.toString()); cb(); } }));
    const access = accessLogger(log);
    for (let i = 0; i < 50; i++) access({ reqId: `r-${i}`, method: 'GET', url: '/renders', ip: '::1', statusCode: 200, responseTime: 1 }, false);
    expect(writes).toHaveLength(0);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(1);
    expect(writes[0]!.trim().split('\n').map((l) => JSON.parse(l).reqId)).toEqual(Array.from({ length: 50 }, (_, i) => `r-${i}`));
  });

  it('a request logger becomes a pino child (bindings, redaction) only when it writes at an enabled level', () => {
    const { lines, log } = sink();
    const child = lazyChildLogger(log, { reqId: 'r-9' }, {});
    child.debug({ password: 'x' }, 'not at info');
    expect(lines).toHaveLength(0);
    expect(child.isLevelEnabled('debug')).toBe(false);
    expect(child.level).toBe('info');
    child.warn({ password: 'hunter2', v1: { status: 503 } }, 'v1 call failed');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ level: 40, reqId: 'r-9', password: '[Redacted]', v1: { status: 503 }, msg: 'v1 call failed' });
    const grand = child.child({ part: 'stream' });
    grand.error('e');
    expect(JSON.parse(lines[1]!)).toMatchObject({ reqId: 'r-9', part: 'stream', level: 50 });
  });
});
