import { errors } from '../errors/catalog.js';
import { boundedText } from '../lib/bounded-text.js';

/** The most characters of a path or a reason a query error repeats (a name in it cut in the middle past it). */
export const ISSUE_TEXT_MAX = 400;

/** Collects every problem of a query, each with its path, so one 400 lists them all. */
export class Issues {
  readonly list: { path: string; reason: string }[] = [];
  add(path: string, reason: string): void {
    if (this.list.length < 50) this.list.push({ path: boundedText(path, ISSUE_TEXT_MAX), reason: boundedText(reason, ISSUE_TEXT_MAX) });
  }
  get empty(): boolean {
    return this.list.length === 0;
  }
  throwIfAny(): void {
    if (this.list.length > 0) throw errors.invalidQuery(this.list);
  }
}
