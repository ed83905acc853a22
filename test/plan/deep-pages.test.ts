import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let token: string;
beforeAll(async () => {
  gw = await startGateway();
  await gw.addUser(0, 'ann@example.com');
  token = await gw.login('ann@example.com');
});
afterAll(async () => gw.close());

/** Newest first, then id ascending: the default order of renders (mappings/resources.json defaultSort). */
const inDefaultOrder = (items: { id: string; date_created: string }[]) =>
  items.every((x, i) => i === 0 || items[i - 1]!.date_created > x.date_created || (items[i - 1]!.date_created === x.date_created && items[i - 1]!.id < x.id));

describe('answers past 2 000 items keep the default order (compact scans kept only the selected fields)', () => {
  it.each([
    '/renders?limit=2500&meta=total_count&fields=id,date_created',
    '/renders?limit=2001&meta=filter_count&fields=id,date_created',
    '/renders?limit=2500&fields=id,date_created,title&filter[status][_neq]=deleted',
    '/renders?limit=2001&page=1&meta=*&fields=id,date_created',
  ])('%s', async (url) => {
    const res = await gw.get(url, token);
    expect(res.status).toBe(200);
    const items = res.body.data as { id: string; date_created: string }[];
    expect(items.length).toBeGreaterThan(20);
    // not the uuid order the bug gave
    expect(items.map((x) => x.id)).not.toEqual(items.map((x) => x.id).sort());
    expect(inDefaultOrder(items)).toBe(true);
    // the same items a small page gives, in the same order
    const small = url.replace(/limit=\d+/, 'limit=20').replace(/&meta=[^&]*/, '').replace(/&page=\d+/, '');
    const first = (await gw.get(small, token)).body.data as { id: string }[];
    expect(items.slice(0, 20).map((x) => x.id)).toEqual(first.map((x) => x.id));
  });
});
