import { errors } from '../errors/catalog.js';

/**
 * How many related items one answer may expand (MAX_RELATED_ITEMS): every many-to-one object expanded and every
 * one-to-many item listed counts, while the answer is built and before any byte of it is sent. Beyond it the
 * request is a 400 INVALID_QUERY naming the limit.
 */
export class ExpansionBudget {
  private used = 0;
  constructor(readonly max: number) {}

  charge(n: number): void {
    this.used += n;
    if (this.used > this.max) {
      throw errors.invalidQuery([{
        path: 'fields',
        reason: `The answer would expand more than ${this.max} related items (MAX_RELATED_ITEMS). Ask for fewer relational fields ` +
          `(fields=id,title,project.title rather than *.*.*), fewer items (limit), or narrow the filter`,
      }]);
    }
  }

  get spent(): number { return this.used; }
  /** Rolls back to an earlier count (a projection round that is evaluated again after its misses are fetched). */
  resetTo(n: number): void { this.used = n; }
}

/** A budget that never refuses (pure uses of the projection outside a request). */
export const unlimited = (): ExpansionBudget => new ExpansionBudget(Number.POSITIVE_INFINITY);
