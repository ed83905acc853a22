import { errors } from '../errors/catalog.js';

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
    if (this.list.length > 0) throw errors.invalidQuery(this.list);
  }
}
