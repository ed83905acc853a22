import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Equivalent } from '../../src/migrate/equivalent-model.js';
import { renderSnippets } from '../../src/migrate/snippets.js';

/**
 * The snippets' text, for what a shape carries from its client: a detail with line breaks stays in its comment, and a
 * parameter named by a dotted path is read under one name in every language (review of the proof's snippet runs).
 */
const dir = mkdtempSync(join(tmpdir(), 'snippet-text-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const equivalent = (detail: string): Equivalent => ({
  resource: 'project',
  calls: [{ name: 'projects', method: 'GET', path: '/v1/projects', query: { team_id: '{team_id}', limit: '100' }, each: null, cursor: true, stopAfter: false,
    why: 'a team\'s projects' }],
  clientSteps: [
    { kind: 'filter', detail: 'filter: account.name _eq ?', args: { op: 'filter', conds: [{ field: 'team.name', test: 'eq', param: 'account.name' }] } },
    { kind: 'join', detail },
    { kind: 'sort', detail },
  ],
  params: [{ name: 'team_id', legacy: 'account', v1: 'team_id' }, { name: 'account.name', legacy: 'account.name', v1: 'team.name' }],
  statuses: null, blocked: [], unverified: [], notes: [],
} as unknown as Equivalent);

describe('snippet text', () => {
  it('keeps a client\'s detail inside its comment, whatever line breaks it carries (every language still parses)', () => {
    const s = renderSnippets(equivalent('x\nprocess.exit(7)\u2028throw 1\r\nimport os; os._exit(7)'), 'f');
    for (const text of [s.node, s.python, s.curl]) {
      for (const line of text.split(/\r\n|\n|\r|\u2028|\u2029/)) expect(line.trimStart()).not.toMatch(/^(process\.exit|throw 1|import os)/);
    }
    writeFileSync(join(dir, 's.mjs'), s.node);
    writeFileSync(join(dir, 's.py'), s.python);
    writeFileSync(join(dir, 's.sh'), s.curl);
    execFileSync(process.execPath, ['--check', join(dir, 's.mjs')]);
    execFileSync('python3', ['-m', 'py_compile', join(dir, 's.py')]);
    execFileSync('sh', ['-n', join(dir, 's.sh')]);
  });

  it('reads a dotted parameter by its name in node, and from ACCOUNT_NAME in the curl script', () => {
    const s = renderSnippets(equivalent('sort by name'), 'f');
    expect(s.node).toContain('params["account.name"]');
    expect(s.node).not.toContain('params.account.name');
    expect(s.python).toContain('params["account.name"]');
    expect(s.curl).toContain('$ENV.ACCOUNT_NAME');
  });

  it('a step left to the client is a TODO in its place: before the count that follows it (held-out check of issue 39: after it)', () => {
    const e = {
      ...equivalent('x'),
      clientSteps: [
        { kind: 'filter', detail: 'filter: title _regex ?' },
        { kind: 'count', detail: 'count(*)', args: { op: 'count', groupBy: null, as: null, of: null } },
      ],
    } as unknown as Equivalent;
    const s = renderSnippets(e, 'f');
    for (const text of [s.node, s.python]) {
      const todo = text.indexOf('TODO (not done by this snippet): filter: title _regex ?');
      const count = text.search(/count: out\.length|"count": len\(out\)/);
      expect(todo).toBeGreaterThan(0);
      expect(count).toBeGreaterThan(todo);
    }
    expect(s.partial).toEqual(['filter: title _regex ?']);
  });
});
