import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * docs/clients.md's table of writes and failing reads is the captured cases: one row per case of
 * test/fixtures/directus/clients-cases.json, Directus's status and code as captured, the gateway's as
 * test/write/item-writes.test.ts holds it to ("same", or the case's deliberate answer and its reason).
 */
interface Case { name: string; gateway?: { status: number; code: string }; because?: string }
const cases = JSON.parse(readFileSync('test/fixtures/directus/clients-cases.json', 'utf8')) as Case[];
const answers = (JSON.parse(readFileSync('test/fixtures/directus/clients-answers.json', 'utf8')) as {
  answers: Record<string, { status: number; body: { errors?: { extensions: { code: string } }[] } | null }>;
}).answers;
const page = readFileSync(new URL('../../docs/clients.md', import.meta.url), 'utf8');
const section = page.split(/^## Writes and errors as Directus answers them$/m)[1]?.split(/^## /m)[0] ?? '';
const rows = section.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Case ')).map((l) => l.split(' | ').map((c) => c.replace(/^\| | \|$/g, '')));

describe('docs/clients.md: writes and errors as Directus answers them', () => {
  it('has one row per captured case, in order', () => {
    expect(rows.map((r) => r[0])).toEqual(cases.map((c) => c.name));
  });

  it('says what Directus answered, what the gateway answers, and why they differ where they do', () => {
    for (const [i, c] of cases.entries()) {
      const dx = answers[c.name]!;
      const directus = [dx.status, dx.body?.errors?.[0]?.extensions.code].filter((x) => x !== undefined).join(' ');
      const gateway = c.gateway ? `${c.gateway.status} ${c.gateway.code}` : directus;
      const verdict = c.gateway ? `deliberate difference, because ${c.because}` : 'same';
      expect(rows[i]!.slice(2), c.name).toEqual([directus, gateway, verdict]);
    }
  });
});
