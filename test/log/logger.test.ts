import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { accessLogger, createLogger, lazyChildLogger } from '../../src/log/logger.js';
import { SCRUB_CHARS, SCRUB_PAIRS, scrubText, scrubUrl } from '../../src/log/scrub.js';
import { TEST_ENV } from '../helpers/gateway.js';

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
  it('leaves no credential in a URL a client mangled: a second ?, a fragment, an encoded & (attack pass 28, M-2)', () => {
    const token = 'static-token-abcdef0123456789';
    for (const url of [
      `/users/me#?access_token=${token}`, `/users/me??access_token=${token}`, `/users/me?fields=email#access_token=${token}`,
      `/users/me?fields=email#%61ccess_token=${token}`, `/users/me?fields=email&?access_token=${token}`, `/users/me?#access_token=${token}`,
      `/users/me?a=1#x#access_token=${token}`, `/users/me?a=%26access_token=${token}`, `/nope?x=1#access_token=${token}`,
      `/users/me?x=[access_token=${token}`, `/users/me?x="access_token=${token}`, `/users/me?x='#access_token=${token}`,
      `/users/me?a=%2526access_token=${token}`, `/users/me?a=b;access_token=${token}`,
      // (the re-check of M-2's fix: a `?` or `#` the client encoded, a credential in the path, a value that starts with
      // the redaction mark, four layers of encoding)
      `/users/me%3Faccess_token=${token}`, `/users/me%3Ffields=email%26access_token=${token}`, `/users/me%23access_token=${token}`,
      `/users/me%3F%3Faccess_token=${token}`, `/users/me&%61ccess_token=${token}`, `/users/me/access_token=${token}`,
      `/users/me??access_token=[Redacted]${token}`, `/users/me??access_token=%5BRedacted%5D${token}`, `/users/me?a=%25252526access_token=${token}`,
      `/users/me%3Faccess_token%3D${token}`, `http://x/users/me??access_token=${token}`, `/users/me?x=1&access_token%3D${token}`,
    ]) expect(scrubText(url), url).not.toContain(token);
  });
  it('leaves no credential behind brackets, a dot, a NUL or a letter beyond ASCII after its name (attack pass 30, M-2: 16 spellings)', () => {
    const token = 'static-token-abcdef0123456789';
    for (const url of [
      `/users/me?x#access_token[]=${token}`, `/users/me?fields=email#access_token[0]=${token}`, `/users/me?x=%23access_token%5B%5D=${token}`,
      `/users/me?a=1#x#access_token[]=${token}`, `/users/me%3Faccess_token%5B%5D%3D${token}`, `/users/me?fields=email#access_token%00=${token}`,
      `/users/me?x=1#access_token.=${token}`, `/users/me?x="access_token[]=${token}`, `/users/me?x#ACCESS_TOKEN[]=${token}`,
      `/users/me?x#access_token]=${token}`, `/users/me?fields=id&?access_token[]=${token}`, `/users/me??access_token[]=${token}`,
      `/users/me#?access_token[]=${token}`, `/users/me?access_token[]=${token}`, `/users/me?access_token[0]=${token}`,
      `/users/me?access_token.=${token}`, `/users/me?x%E0#access_token[]=${token}`, `/users/me?x#access_token%2B%3D${token}`,
      `/users/me?x#access_to\u212Aen=${token}`, `/users/me?x#acce\u017Fs_token=${token}`, `/users/me?x#access_token\u0130=${token}`,
      `/users/me?x#access_token=[Redacted]]${token}`, `/users/me?x#access_token=[Redacted];${token}`, `/users/me?x#access_token=[Redacted]"${token}`,
      // (the re-check of pass 30's fix: separators and digits that NFKC makes of other characters hid the name, a raw `&`
      // inside brackets, a zero-width space inside the name, the redaction mark written by the client)
      `/users/me?x#access_token%EF%BC%86=${token}`, `/users/me?x#access_token%EF%BC%9F=${token}`, `/users/me?x#access_token%EF%BC%83=${token}`,
      `/users/me?x#access_token%C2%B2=${token}`, `/users/me?x#access_token%E2%91%A0=${token}`, `/users/me?x#access_token%C2%AA=${token}`,
      `/users/me?x#access_token%CC%81=${token}`, `/users/me?access_token[&]=${token}`, `/users/me?x#acc%E2%80%8Bess_token=${token}`,
      `/users/me?x#x.access_token=[Redacted]%20${token}`, `/users/me?x#x.access_token=[Redacted]%26${token}`,
      `/users/me?x#x.access_token=%5BRedacted%5D%09${token}`, `/users/me?x#%EF%BD%81ccess_token=${token}`,
    ]) expect(scrubText(url), url).not.toContain(token);
    // (attack pass 32, M-2: a word glued before or after a long name, an HTML-escaped `=`, a colon)
    for (const url of [
      `/users/me?fields=idaccess_token=${token}`, `/users/me?x=1access_token=${token}`, `/users/me?access_token1=${token}`,
      `/users/me?fields=id&amp;access_token&#61;${token}`, `/users/me?access_token:${token}`, `/users/me?fields=id&ampaccess_token=${token}`,
      `/users/me?fields=id\\x26access_token=${token}`, `/users/me?x#a\u0301c\u0301cess_token=${token}`,
    ]) expect(scrubText(url), url).not.toContain(token);
    // a path of `]=` pieces is read once (each `]` looked for its `[` within its piece): redacted as a whole, not a pass a piece
    expect(scrubText(`/%41${']=access_token'.repeat(1_000)}`)).toBe('/[Redacted]');
  });

  it('redacts a JWT wherever it stands, and reads a run of `eyJ` once (attack pass 32, H-1: 15 KB of eyJeyJ… 373–406 ms)', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';
    expect(scrubText(`/x/${jwt}/y`)).toBe('/x/[Redacted]/y');
    expect(scrubText(`error: token ${jwt}.`)).toBe('error: token [Redacted].');
    expect(scrubText(`a.b.eyJxyz.abcd.e ${jwt}`)).toBe('a.b.eyJxyz.abcd.e [Redacted]');
    const run = `/${'eyJ'.repeat(5_000)}`;
    expect(scrubText(run)).toBe(run); // (no dot: no JWT)
    expect(scrubText(`${run}.abcd.e`)).toBe('/[Redacted]');
  });

  it('a log line writes a URL to its first SCRUB_CHARS characters, scrubbed, the rest as its length', () => {
    const token = 'static-token-abcdef0123456789';
    const url = `/renders?fields=id&access_token=${token}&x=${'a'.repeat(12_000)}&refresh_token=${token}`;
    const out = scrubUrl(url);
    expect(out).not.toContain(token);
    expect(out.length).toBeLessThan(SCRUB_CHARS + 64);
    expect(out.endsWith(`[… ${url.length - SCRUB_CHARS} characters more]`)).toBe(true);
    expect(scrubUrl('/renders?fields=id')).toBe('/renders?fields=id');
  });

  it('keeps ordinary parameters as they are', () => {
    expect(scrubText('/renders?filter[title][_eq]=a&fields=id,title')).toBe('/renders?filter[title][_eq]=a&fields=id,title');
    for (const url of ['/renders?keywords=a&tokens=2&linked=1', '/renders?sort=-token&fields=key', '/renders?filter[keyframe][_eq]=1'])
      expect(scrubText(url)).toBe(url);
  });

  it('writes a query past SCRUB_CHARS or SCRUB_PAIRS as its length alone, and tells a malformed escape without an exception (attack pass 30, H-1)', () => {
    const pairs = Array(5_000).fill('%=').join('&'); // (15 KB: 5 000 malformed names)
    expect(scrubText(`/nope?${pairs}`)).toBe(`/nope?[Redacted: ${pairs.length} characters]`);
    expect(scrubText(`/users/me#${pairs}`)).toBe(`/users/me#[Redacted: ${pairs.length} characters]`);
    const many = Array(SCRUB_PAIRS + 1).fill('a=1').join('&');
    expect(many.length).toBeLessThan(SCRUB_CHARS);
    expect(scrubText(`/renders?${many}&access_token=T`)).toBe(`/renders?[Redacted: ${many.length + 15} characters]`);
    // within the bounds, every pair is looked at, and malformed ones do not throw one by one: each exception cost ~7 µs
    const original = globalThis.decodeURIComponent;
    let thrown = 0;
    const spy = vi.spyOn(globalThis, 'decodeURIComponent').mockImplementation((s) => { try { return original(s); } catch (e) { thrown++; throw e; } });
    try {
      const bad = Array(SCRUB_PAIRS).fill('%E0=1').join('&').replace(/^%E0=1/, '%=1');
      expect(scrubText(`/nope?${bad.slice(0, -5)}&access_token=T`)).not.toContain('=T');
      expect(scrubText(`/nope?${bad}`)).toBe(`/nope?${bad}`);
      // (a long text is decoded at once, its one exception caught: a few for the whole text, never one a pair)
      expect(thrown).toBeLessThanOrEqual(10);
    } finally { spy.mockRestore(); }
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

describe('lines reach stdout in a real process', () => {
  /**
   * A process logging as the gateway does (createLogger to stdout, an access line): a warning and a request line, then
   * "logged" on stderr; then it crashes (THEN=crash), or waits for a signal (THEN=wait).
   */
  const SCRIPT = `
    const { accessLogger, createLogger } = await import(${JSON.stringify(new URL('../../src/log/logger.ts', import.meta.url).href)});
    const log = createLogger('info');
    const access = accessLogger(log);
    log.warn({ probe: 'warning-probe' }, 'a quiet warning');
    access({ reqId: 'access-probe', method: 'GET', url: '/renders', ip: '::1', statusCode: 200, responseTime: 1 }, false);
    process.stderr.write('logged\\n');
    if (process.env.THEN === 'crash') process.nextTick(() => { throw new Error('crash probe'); });
    else setInterval(() => {}, 60_000);
  `;
  interface Run { stdout: string; stderr: string; code: number | null; signal: NodeJS.Signals | null }

  /** Runs SCRIPT; once it has logged, waits `afterMs` and sends `signal` (none: let it end by itself). */
  const run = (then: 'crash' | 'wait', afterMs = 0, signal?: NodeJS.Signals) => new Promise<Run>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { env: { ...process.env, THEN: then }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => { stdout += d; });
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d;
      if (signal && stderr.includes('logged\n') && !child.killed) setTimeout(() => child.kill(signal), afterMs);
    });
    child.once('error', reject);
    child.once('close', (code, sig) => resolve({ stdout, stderr, code, signal: sig }));
  });
  const probes = (stdout: string) => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string; probe?: string; reqId?: string });

  it('a line logged 200 ms before a SIGKILL is on stdout (a warning, and a request line)', async () => {
    const r = await run('wait', 200, 'SIGKILL');
    expect(r.signal).toBe('SIGKILL');
    expect(probes(r.stdout)).toEqual([
      expect.objectContaining({ level: 40, probe: 'warning-probe', msg: 'a quiet warning' }),
      expect.objectContaining({ level: 30, reqId: 'access-probe', msg: 'request completed' }),
    ]);
  });

  it('every line is written when SIGTERM arrives at once, and SIGTERM still ends a process that does not handle it', async () => {
    const r = await run('wait', 0, 'SIGTERM');
    expect(r.signal).toBe('SIGTERM');
    expect(probes(r.stdout).map((l) => l.probe ?? l.reqId)).toEqual(['warning-probe', 'access-probe']);
  });

  it('every line is written on a crash (an uncaught exception in the same turn as the lines)', async () => {
    const r = await run('crash');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('crash probe');
    expect(probes(r.stdout).map((l) => l.probe ?? l.reqId)).toEqual(['warning-probe', 'access-probe']);
  });

  it('the gateway (src/main.ts): its start-up lines and a request line are on stdout 200 ms later, before a SIGKILL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-log-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env, ...TEST_ENV, V1_BASE_URL: 'http://127.0.0.1:9', DATABASE_URL: join(dir, 'gateway.db'), PORT: '0', HOST: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => { stderr += d; });
    const closed = new Promise<NodeJS.Signals | null>((resolve) => child.once('close', (_c, sig) => resolve(sig)));
    try {
      // the port, from Fastify's start-up line: it must reach stdout by itself (nothing else is logged meanwhile)
      const base = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start-up line on stdout within 20 s; stdout: ${stdout}; stderr: ${stderr}`)), 20_000);
        child.stdout!.on('data', (d: Buffer) => {
          stdout += d;
          const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
          if (m) { clearTimeout(timer); resolve(m[1]!); }
        });
        child.once('close', () => reject(new Error(`the gateway exited: ${stderr}`)));
      });
      expect((await fetch(`${base}/no-such-route-probe`)).status).toBe(404);
      await new Promise((r) => setTimeout(r, 200));
      child.kill('SIGKILL');
      expect(await closed).toBe('SIGKILL');
      const lines = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string; req?: { url: string }; res?: { statusCode: number } });
      expect(lines.find((l) => l.req?.url === '/no-such-route-probe')).toMatchObject({ msg: 'request completed', res: { statusCode: 404 } });
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
