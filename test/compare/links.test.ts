import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportLink } from '../../src/compare/links.js';
import { ManualClock } from '../../src/lib/clock.js';
import { startGateway, TEST_ENV, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let base: string;
const clock = new ManualClock(Date.now());
beforeAll(async () => {
  gw = await startGateway({}, {}, { clock });
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  await gw.deps.compareStore.record({ route: 'GET /renders', request: 'GET /renders?limit=1', differences: [], noise: new Set(), legacyMs: 5, translatedMs: 3 });
});
afterAll(async () => gw.close());

describe('read-only browser links to the comparison report', () => {
  it('open the page and its JSON while valid; expired or tampered links and every write are refused', async () => {
    const link = reportLink(TEST_ENV.GATEWAY_ADMIN_TOKEN, clock.now(), 60_000);
    const page = await fetch(`${base}/_gateway/compare/view?link=${encodeURIComponent(link)}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('data-route="GET /renders"');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const json = await fetch(`${base}/_gateway/compare/view.json?link=${encodeURIComponent(link)}`);
    expect(((await json.json()) as any).data.routes[0].route).toBe('GET /renders');
    const [exp, sig] = link.split('.');
    for (const bad of [`${Number(exp) + 1}.${sig}`, `${exp}.${sig!.slice(0, -2)}xx`, 'nothing', '']) {
      expect((await fetch(`${base}/_gateway/compare/view?link=${encodeURIComponent(bad)}`)).status).toBe(403);
    }
    expect((await fetch(`${base}/_gateway/compare/view?link=${encodeURIComponent(link)}`, { method: 'DELETE' })).status).toBe(404);
    expect((await fetch(`${base}/_gateway/compare?link=${encodeURIComponent(link)}`, { method: 'DELETE' })).status).toBe(403);
    clock.advance(60_001);
    expect((await fetch(`${base}/_gateway/compare/view?link=${encodeURIComponent(link)}`)).status).toBe(403);
    expect(gw.logs.join('')).not.toContain(sig);
  });

  it('refreshes its figures without a reload (Chromium, the page clock moved forward)', async () => {
    const link = reportLink(TEST_ENV.GATEWAY_ADMIN_TOKEN, clock.now(), 600_000);
    const exe = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p))!;
    const browser = await chromium.launch({ executablePath: exe, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
    try {
      const page = await browser.newPage();
      await page.clock.install();
      await page.goto(`${base}/_gateway/compare/view?link=${encodeURIComponent(link)}`);
      const requests = () => page.locator('#routes tbody tr[data-route="GET /renders"] td').nth(1).textContent();
      const before = Number(await requests());
      await gw.deps.compareStore.record({ route: 'GET /renders', request: 'GET /renders?limit=2', differences: [], noise: new Set(), legacyMs: 5, translatedMs: 3 });
      await page.clock.fastForward(10_000);
      await page.waitForSelector('body[data-refreshed]', { state: 'attached' }); // (no string evaluation: the page's CSP forbids it)
      expect(Number(await requests())).toBe(before + 1);
    } finally {
      await browser.close();
    }
  });
});
