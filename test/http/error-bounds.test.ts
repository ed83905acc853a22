import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError, MESSAGE_MAX } from '../../src/errors/catalog.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * An error repeats what it names from the request (a filter key, an alias, a field) — bounded: a refused question with a
 * 900 KB name answered a 1.8 MB error, the name twice, and each cost the instance ~40 ms (attack pass 17, F1).
 */
const BIG = 'k'.repeat(900_000);
let gw: TestGateway;
let token: string;
beforeAll(async () => {
  gw = await startGateway({ INDEX_ENABLED: 'false' });
  await gw.addUser(0, 'names@example.com', 'names-password-123');
  token = await gw.login('names@example.com', 'names-password-123');
});
afterAll(async () => gw.close());

const search = (query: object) => gw.app.inject({
  method: 'SEARCH', url: '/renders', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify({ query }),
});

describe('errors naming what the request named, bounded', () => {
  it('a 900 KB filter key or alias is refused in a small error that still says what and where', async () => {
    for (const [query, start, end] of [
      [{ filter: { [`a${BIG}z`]: { _eq: 1 } } }, 'Invalid query. Invalid filter key "akkk', 'kkkz" on "renders".'],
      [{ filter: { title: { _eq: 'x' }, [`b${BIG}y`]: { _eq: 1 } } }, 'Invalid query. Invalid filter key "bkkk', 'kkky" on "renders".'],
    ] as const) {
      const res = await search(query);
      expect(res.statusCode).toBe(400);
      expect(res.body.length).toBeLessThan(4_000);
      const [e] = (res.json() as { errors: { message: string; extensions: { code: string; reason: string } }[] }).errors;
      expect(e?.extensions.code).toBe('INVALID_QUERY');
      expect(e?.message.startsWith(start), e?.message).toBe(true);
      expect(e?.message.endsWith(end), e?.message).toBe(true);
      expect(e?.message).toMatch(/…\[\d+ characters cut\]…/);
    }
    // a short name is repeated whole, as Directus does
    const res = await search({ filter: { nosuch: { _eq: 1 } } });
    expect(res.json()).toEqual({ errors: [{ message: 'Invalid query. Invalid filter key "nosuch" on "renders".', extensions: { code: 'INVALID_QUERY', reason: 'Invalid filter key "nosuch" on "renders"' } }] });
  });

  it('every error message is bounded, its start and end kept', () => {
    const e = new GatewayError('INVALID_PAYLOAD', `start ${'m'.repeat(50_000)} end`, { messages: [`one ${'n'.repeat(9_000)} two`, 'short'] });
    expect(e.message.length).toBeLessThanOrEqual(MESSAGE_MAX + 40);
    expect(e.message.startsWith('start mmm')).toBe(true);
    expect(e.message.endsWith('mmm end')).toBe(true);
    expect(e.messages[0]!.length).toBeLessThanOrEqual(MESSAGE_MAX + 40);
    expect(e.messages[0]!.endsWith('nnn two')).toBe(true);
    expect(e.messages[1]).toBe('short');
  });
});

