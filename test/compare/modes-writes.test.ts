import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startLegacyBackend, type LegacyBackend } from '../helpers/legacy-backend.js';

/**
 * COMPARE_WRITES=true: a write is compared with its body on both sides, and sent to the legacy side once (the noise
 * check asks the legacy side a second time for reads only: a write asked again would be a second write).
 */
let ref: TestGateway;
let gw: TestGateway;
let legacy: LegacyBackend;
let base: string;
let staticToken: string;
const LEGACY_TOKEN = 'legacy-token-of-cal';
const tokens: Record<string, string> = { [LEGACY_TOKEN]: 'cal@example.com' };

beforeAll(async () => {
  ref = await startGateway();
  await ref.addUser(0, 'cal@example.com');
  legacy = await startLegacyBackend(ref, await ref.login('cal@example.com'), () => gw, tokens);
  gw = await startGateway({ ROUTE_MODES: JSON.stringify({ '/render': 'shadow', '/renders': 'compare' }), LEGACY_BASE_URL: legacy.url, COMPARE_WRITES: 'true' },
    {}, { sim: ref.s });
  const user = await gw.addUser(0, 'cal@example.com');
  staticToken = (await gw.deps.users.createStaticToken(user, 'shared with legacy')).token;
  tokens[staticToken] = 'cal@example.com';
  base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
}, 60_000);
afterAll(async () => { await gw?.close(); await legacy?.close(); await ref?.close(); });

const legacyWrites = (from: number, method: string) => legacy.sent.slice(from).filter((s) => s.method === method).map((s) => JSON.parse(s.raw).data);

describe('writes compared (COMPARE_WRITES=true)', () => {
  it('shadow mode: the translated side gets the body; the legacy side gets the write once', async () => {
    const firstId = async () => (await gw.get('/renders?limit=1&fields=id', staticToken)).body.data[0].id as string;
    await firstId();
    // (the legacy side's first answer gives the gateway its own uuids for these renders: the id as the gateway names it then)
    await gw.app.comparisonsIdle();
    const id = await firstId();
    await gw.app.comparisonsIdle();
    const from = legacy.sent.length;
    const res = await fetch(`${base}/render/${id}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${LEGACY_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'shadowed title' }),
    });
    expect(res.headers.get('x-gateway-answered-by')).toBe('legacy');
    const text = await res.text();
    expect(JSON.parse(text).data?.title, text).toBe('shadowed title');
    await gw.app.comparisonsIdle();
    expect(legacyWrites(from, 'PATCH').map((d) => d.title)).toEqual(['shadowed title']);
    // the gateway's own side did the write with its body: it keeps the new title
    const after = await gw.get(`/renders/${id}?fields=title`, staticToken);
    expect(after.body.data?.title, JSON.stringify(after.body)).toBe('shadowed title');
    await gw.app.comparisonsIdle();
  });

  it('shadow mode reads a body up to MAX_PAYLOAD_BYTES, as every route does: past it, a 400 and nothing sent on', async () => {
    const from = legacy.sent.length;
    const big = JSON.stringify({ title: 'x'.repeat(gw.config.MAX_PAYLOAD_BYTES) });
    for (const chunked of [false, true]) {
      const body = chunked ? new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(big)); c.close(); } }) : big;
      const res = await fetch(`${base}/render/00000000-0000-4000-8000-000000000000`, {
        method: 'PATCH', headers: { authorization: `Bearer ${LEGACY_TOKEN}`, 'content-type': 'application/json' }, body, duplex: 'half',
      } as RequestInit);
      expect(res.status, `chunked: ${chunked}`).toBe(400);
      expect(res.headers.get('x-gateway-answered-by')).not.toBe('legacy');
      expect(((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('INVALID_PAYLOAD');
    }
    await gw.app.comparisonsIdle();
    expect(legacy.sent.length).toBe(from);
  });

  it('compare mode: the legacy side gets the write with its body, once', async () => {
    const { id: project, account } = (await gw.get('/projects?limit=1&fields=id,account', staticToken)).body.data[0];
    const from = legacy.sent.length;
    const res = await fetch(`${base}/renders`, {
      method: 'POST', headers: { authorization: `Bearer ${staticToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ project, account, data: {} }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await gw.app.comparisonsIdle();
    expect(legacyWrites(from, 'POST').map((d) => d.project)).toEqual([project]);
  });
});
