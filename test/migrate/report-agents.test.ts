import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMigrationReport } from '../../src/admin/migration-report.js';
import { reportHtml, reportMarkdown } from '../../src/migrate/render.js';
import type { MigrationReport } from '../../src/migrate/report.js';
import { AGENT_CHARS, AGENTS_KEPT } from '../../src/store/client-shapes.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 39, point 4: a client whose User-Agent no family of mappings/clients.json names is `~other`; the report lists the
 * User-Agents it came with (counted, the most used first, at most AGENTS_KEPT, each cut to AGENT_CHARS, on one line,
 * escaped), so a team can give them families. Before, `~other` merged every custom agent, unnamed.
 */
let gw: TestGateway;
let report: MigrationReport;
const inject = (o: { method: string; url: string; headers: Record<string, string> }) => gw.app.inject(o as never);
const HOSTILE = '<script>alert(1)</script>\nInjected: `x`';

beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'tiny' });
  await gw.addUser(0, 'agents@example.com', 'agents-password-123');
  const token = await gw.login('agents@example.com', 'agents-password-123');
  // only the test's own flushes from here: the recorder's timed one (every 2 s), falling between two asks on a loaded
  // machine, keeps another set (the most recently seen across flushes) — the first test failed so once in a full run
  await gw.deps.shapes.close();
  const ask = async (ua: string, times = 1) => {
    for (let i = 0; i < times; i++) {
      const res = await gw.app.inject({ method: 'GET', url: '/renders?fields=id&limit=1', headers: { authorization: `Bearer ${token}`, 'user-agent': ua } });
      expect(res.statusCode).toBe(200);
    }
  };
  await ask('acme-render-sync/2.3', 3);
  await ask('acme-render-sync/2.4', 1);
  await ask('curl/8.5.0', 2);
  await ask(HOSTILE, 1);
  await ask(`long-agent/${'x'.repeat(500)}`, 1);
  // (more distinct agents than are kept: the most recently seen stay)
  for (let i = 0; i < AGENTS_KEPT + 2; i++) await ask(`many-agents/${i}`, 1);
  await gw.deps.shapes.flush();
  report = await buildMigrationReport(gw.deps, inject, { prove: false });
}, 120_000);
afterAll(async () => { await gw?.close(); });

describe('the User-Agents of ~other, listed for the operator', () => {
  it('the ~other client lists its agents, counted and cut; a named family lists none', () => {
    const other = report.clients.find((c) => c.client.endsWith('~other'));
    const curl = report.clients.find((c) => c.client.endsWith('~curl'));
    expect(curl?.agents).toBeUndefined();
    const agents = other?.agents ?? [];
    expect(agents.length).toBe(AGENTS_KEPT);
    // (between two flushes the first AGENTS_KEPT distinct ones are counted, the others not: made-up agents hold no more)
    expect(agents.every((a) => a.agent.length <= AGENT_CHARS)).toBe(true);
    const firsts = ['acme-render-sync/2.3', 'acme-render-sync/2.4', HOSTILE.replace('\n', ' '), `long-agent/${'x'.repeat(500)}`.slice(0, AGENT_CHARS),
      ...Array.from({ length: AGENTS_KEPT + 2 }, (_, i) => `many-agents/${i}`)].slice(0, AGENTS_KEPT);
    expect(agents.map((a) => a.agent).sort()).toEqual(firsts.sort());
  });

  it('across flushes the store keeps the most recently seen AGENTS_KEPT', async () => {
    await new Promise((r) => setTimeout(r, 5));
    const token = await gw.login('agents@example.com', 'agents-password-123');
    for (const ua of ['late-agent/1', 'late-agent/2']) {
      await gw.app.inject({ method: 'GET', url: '/renders?fields=id&limit=1', headers: { authorization: `Bearer ${token}`, 'user-agent': ua } });
    }
    await gw.deps.shapes.flush();
    const again = await buildMigrationReport(gw.deps, inject, { prove: false });
    const agents = (again.clients.find((c) => c.client.endsWith('~other'))?.agents ?? []).map((a) => a.agent);
    expect(agents).toHaveLength(AGENTS_KEPT);
    expect(agents).toEqual(expect.arrayContaining(['late-agent/1', 'late-agent/2']));
  });

  it('a few agents: every one, the most used first; a hostile one on one line, never HTML; a long one cut', async () => {
    const g = await startGateway({ INDEX_ENABLED: 'false' }, { scale: 'tiny' });
    try {
      await g.addUser(0, 'few@example.com', 'few-password-1234');
      const token = await g.login('few@example.com', 'few-password-1234');
      for (const [ua, n] of [['acme-render-sync/2.3', 3], ['acme-render-sync/2.4', 1], [HOSTILE, 2], [`long-agent/${'x'.repeat(500)}`, 1]] as const) {
        for (let i = 0; i < n; i++) {
          await g.app.inject({ method: 'GET', url: '/renders?fields=id&limit=1', headers: { authorization: `Bearer ${token}`, 'user-agent': ua } });
        }
      }
      await g.deps.shapes.flush();
      const r = await buildMigrationReport(g.deps, (o) => g.app.inject(o as never), { prove: false });
      const agents = r.clients.find((c) => c.client.endsWith('~other'))?.agents ?? [];
      expect(agents.map((a) => [a.agent.slice(0, 24), a.count])).toEqual([
        ['acme-render-sync/2.3', 3], ['<script>alert(1)</script', 2], ['acme-render-sync/2.4', 1], ['long-agent/xxxxxxxxxxxxx', 1],
      ]);
      expect(agents.find((a) => a.agent.startsWith('long-agent'))?.agent).toHaveLength(AGENT_CHARS);
      expect(agents.find((a) => a.agent.startsWith('<script>'))?.agent).not.toMatch(/\n/);
      const md = reportMarkdown(r);
      expect(md).toContain('`acme-render-sync/2.3` (3)');
      const html = reportHtml(r);
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(html).not.toContain('<script>alert(1)');
    } finally {
      await g.close();
    }
  }, 120_000);
});
