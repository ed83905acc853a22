import { GatewayError } from '../errors/catalog.js';

/** Collects every problem of a query, each with its path, so one 400 lists them all. */
export class Issues {
  readonly list: { path: string; reason: string }[] = [];
  add(path: string, reason: string): void {
    if (this.list.length < 50) this.list.push({ path, reason });
  }
  get empty(): boolean {
    return this.list.length === 0;
  }
  throwIfAny(): void {
    if (this.list.length > 0) throw invalidQueryError(this.list);
  }
}

export function invalidQueryError(problems: readonly { path: string; reason: string }[]): GatewayError {
  const messages = problems.map((p) => `Invalid query. ${p.reason}${/[.!]$/.test(p.reason) ? '' : '.'}`);
  return new GatewayError('INVALID_QUERY', messages[0] ?? 'Invalid query.', {
    messages,
    extensions: { reason: problems[0]?.reason, path: problems[0]?.path },
    entryExtensions: problems.map((p) => ({ reason: p.reason, path: p.path })),
  });
}
