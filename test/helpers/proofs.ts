import { expect } from 'vitest';
import { buildMigrationReport } from '../../src/admin/migration-report.js';
import type { ShapeReport } from '../../src/migrate/report.js';
import type { TestGateway } from './gateway.js';

/** The shape of `key` is proven equal in every language, no step left to the client: its proof. */
export function provenEqual(byKey: ReadonlyMap<string, ShapeReport>, key: string): NonNullable<ShapeReport['proof']> {
  const s = byKey.get(key);
  expect(s, `${key} among ${[...byKey.keys()].join(' | ')}`).toBeDefined();
  const p = s!.proof!;
  const line = `${key}: ${p.result} ${p.reason ?? ''} ${JSON.stringify(p.differences)} partial: ${s!.snippets.partial.join('; ')}`;
  expect(s!.snippets.partial, line).toEqual([]);
  expect(p.result, line).toBe('equal');
  expect(p.snippets?.map((x) => x.result), line).toEqual(['equal', 'equal', 'equal']);
  return p;
}

/**
 * A client of a test gateway for proof tests: `ask` a legacy URL as a python-urllib client (200 expected; each answer
 * kept in `answers` by URL), and `inject` for the report's own requests.
 */
export function proofClient(gateway: () => TestGateway, token: () => string) {
  const answers = new Map<string, any>();
  const inject = (o: { method: string; url: string; headers: Record<string, string> }) => gateway().app.inject(o as never);
  const ask = async (url: string): Promise<any> => {
    const res = await gateway().app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token()}`, 'user-agent': 'python-urllib/3.12' } } as never);
    expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    answers.set(url, res.json());
    return res.json();
  };
  /** The shapes the gateway recorded, each proven (the report with proofs), by key. */
  const proven = async (): Promise<Map<string, ShapeReport>> => {
    await gateway().deps.shapes.flush();
    const report = await buildMigrationReport(gateway().deps, inject, { prove: true });
    return new Map(report.clients.flatMap((c) => c.shapes).map((s) => [s.key, s]));
  };
  return { answers, inject, ask, proven };
}
