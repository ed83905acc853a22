import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corsOrigin } from '../../src/http/cors.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * A browser front-end on another origin, in the real Chromium: the page is served from http://app.gateway.test:<p>, the
 * gateway answers at http://api.gateway.test:<g> (both names mapped to 127.0.0.1 by --host-resolver-rules; same site,
 * other origin, as app.example.com and api.example.com are). It logs in, lists renders with the bearer token, refreshes
 * in cookie mode (the cookie scoped to the site with REFRESH_TOKEN_COOKIE_DOMAIN); a page on a disallowed origin is refused.
 */
let gw: TestGateway;
let api = '';
let page: Server;
let pagePort = 0;
let other: Server;
let otherPort = 0;
let browser: Browser;
const serve = (): Promise<[Server, number]> => new Promise((resolve) => {
  const s = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>front-end</title>'));
  s.listen(0, '127.0.0.1', () => resolve([s, (s.address() as { port: number }).port]));
});

beforeAll(async () => {
  [page, pagePort] = await serve();
  [other, otherPort] = await serve();
  gw = await startGateway({
    CORS_ENABLED: 'true', CORS_ORIGIN: `http://app.gateway.test:${pagePort}`, REFRESH_TOKEN_COOKIE_DOMAIN: 'gateway.test',
  });
  await gw.addUser(0, 'browser@example.com', 'browser-password-1');
  const port = Number(new URL(await gw.app.listen({ port: 0, host: '127.0.0.1' })).port);
  api = `http://api.gateway.test:${port}`;
  const exe = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
  expect(exe, 'Debian chromium is installed (.ci/run installs it)').toBeDefined();
  browser = await chromium.launch({
    executablePath: exe!,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync',
      '--host-resolver-rules=MAP *.gateway.test 127.0.0.1',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  page?.close();
  other?.close();
});

describe('CORS_ORIGIN', () => {
  it('reads true, false, one origin and a list as Directus does', () => {
    expect(corsOrigin('true')).toBe(true);
    expect(corsOrigin('false')).toBe(false);
    expect(corsOrigin('https://a.example')).toEqual(['https://a.example']);
    expect(corsOrigin('https://a.example, https://b.example')).toEqual(['https://a.example', 'https://b.example']);
  });
});

describe('a browser front-end on another site', () => {
  it('logs in, lists renders with the bearer token and refreshes in cookie mode', async () => {
    const tab = await browser.newPage();
    await tab.goto(`http://app.gateway.test:${pagePort}/`);
    const result = await tab.evaluate(async (base) => {
      const login = await fetch(`${base}/auth/login`, {
        method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'browser@example.com', password: 'browser-password-1', mode: 'cookie' }),
      });
      const token = ((await login.json()) as any).data.access_token as string;
      const renders = await fetch(`${base}/renders?limit=2&fields=id,title`, { headers: { authorization: `Bearer ${token}` } });
      const list = ((await renders.json()) as any).data as unknown[];
      const refresh = await fetch(`${base}/auth/refresh`, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: '{"mode":"cookie"}' });
      const refreshed = refresh.ok ? (((await refresh.json()) as any).data.access_token as string) : '';
      // the refresh cookie rotated: a second refresh with the new cookie works too
      const again = await fetch(`${base}/auth/refresh`, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: '{"mode":"cookie"}' });
      const me = await fetch(`${base}/users/me?fields=email`, { headers: { authorization: `Bearer ${refreshed}` } });
      return { login: login.status, listed: list.length, refresh: refresh.status, again: again.status, me: ((await me.json()) as any).data.email, token: token.length > 0 };
    }, api);
    expect(result).toEqual({ login: 200, listed: 2, refresh: 200, again: 200, me: 'browser@example.com', token: true });
    await tab.close();
  });

  it('refuses a page on a disallowed origin (no Access-Control-Allow-Origin for it)', async () => {
    const tab = await browser.newPage();
    await tab.goto(`http://elsewhere.gateway.test:${otherPort}/`);
    const outcome = await tab.evaluate(async (base) => {
      try {
        await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":"x@example.com","password":"y"}' });
        return 'answered';
      } catch {
        return 'refused';
      }
    }, api);
    expect(outcome).toBe('refused');
    const local = api.replace('api.gateway.test', '127.0.0.1');
    const preflight = await fetch(`${local}/renders`, { method: 'OPTIONS', headers: { origin: `http://elsewhere.gateway.test:${otherPort}`, 'access-control-request-method': 'GET' } });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const allowed = await fetch(`${local}/renders`, {
      method: 'OPTIONS', headers: { origin: `http://app.gateway.test:${pagePort}`, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(allowed.headers.get('access-control-allow-origin')).toBe(`http://app.gateway.test:${pagePort}`);
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    expect(allowed.headers.get('access-control-max-age')).toBe('18000');
    await tab.close();
  });
});

describe('the start-up warning about reflected origins', () => {
  const corsWarnings = (logs: string[]) => logs.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string })
    .filter((l) => /CORS reflects every origin/.test(l.msg));

  it('is logged once with CORS_ORIGIN=true and credentials (kept: even "null" is reflected); not for listed origins, nor without credentials', async () => {
    const reflecting = await startGateway({ CORS_ENABLED: 'true', CORS_ORIGIN: 'true' }, {}, { sim: gw.s });
    try {
      const warned = corsWarnings(reflecting.logs);
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ level: 40, CORS_ORIGIN: 'true', CORS_CREDENTIALS: true });
      const preflight = await reflecting.app.inject({ method: 'OPTIONS', url: '/renders', headers: { origin: 'null', 'access-control-request-method': 'GET' } });
      expect(preflight.headers['access-control-allow-origin']).toBe('null');
      expect(preflight.headers['access-control-allow-credentials']).toBe('true');
    } finally {
      await reflecting.close();
    }
    expect(gw.logs.join('')).toContain('"level"'); // the listed-origin gateway of this file logs, but no such warning
    expect(corsWarnings(gw.logs)).toEqual([]);
    const noCredentials = await startGateway({ CORS_ENABLED: 'true', CORS_ORIGIN: 'true', CORS_CREDENTIALS: 'false' }, {}, { sim: gw.s });
    try {
      expect(corsWarnings(noCredentials.logs)).toEqual([]);
      const preflight = await noCredentials.app.inject({ method: 'OPTIONS', url: '/renders', headers: { origin: 'https://any.example', 'access-control-request-method': 'GET' } });
      expect(preflight.headers['access-control-allow-origin']).toBe('https://any.example');
    } finally {
      await noCredentials.close();
    }
  });
});
