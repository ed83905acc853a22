import { errors } from '../errors/catalog.js';

/**
 * How many related items one answer may expand (MAX_RELATED_ITEMS): every many-to-one object expanded and every
 * one-to-many item listed counts, while the answer is built and before any byte of it is sent. Beyond it the
 * request is a 400 INVALID_QUERY naming the limit.
 */
export class ExpansionBudget {
  private used = 0;
  private itemBytes = 0;
  /**
   * `max`: related items an answer may expand. `maxItemMb` (MAX_ITEM_MB): the values one answered item may copy from
   * related records, counted as they are copied (a string by its length, a JSON value by its text, measured once) — an
   * item's JSON can be many times what is stored (a project's renders in each render, again under each alias), so it is
   * bounded while it is built, never once serialised.
   */
  constructor(readonly max: number, readonly maxItemMb = Number.POSITIVE_INFINITY) {}

  /** A new answered item begins. */
  startItem(): void { this.itemBytes = 0; }

  /** The bytes the current item has copied so far (a list projected over rounds carries its share to the next). */
  get itemCopied(): number { return this.itemBytes; }

  /** Counts `bytes` copied earlier into the current item (a list resumed from an earlier round), as chargeValue does. */
  chargeCopied(bytes: number): void { this.chargeValue(undefined, bytes); }

  /** Counts a value copied from a related record into the current item; past MAX_ITEM_MB, the 400. */
  chargeValue(v: unknown, bytes = valueSize(v)): void {
    this.itemBytes += bytes;
    if (this.itemBytes > this.maxItemMb * 1_048_576) {
      throw errors.invalidQuery([{
        path: 'fields',
        reason: `One item of the answer would be over ${this.maxItemMb} MB, more than one item may be (${this.maxItemMb} MB, MAX_ITEM_MB). ` +
          'Ask for fewer relational fields, or fewer related items (deep[…][_limit])',
      }]);
    }
  }

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

  /**
   * Counts the related items a `deep` filter, search or sort is about to test (`candidates`, each against `terms` filter
   * terms): a unit of the budget for every TESTS_A_UNIT tests, charged before they are made. Past the budget, a 400
   * naming `deep` (attack pass 11, H: a 999-term `_or` under a nested relation tested on every candidate of every
   * parent held the instance 10–16 s, the items it rejected never counted).
   */
  chargeTests(candidates: number, terms: number): void {
    this.used += (candidates * (terms + 1)) / TESTS_A_UNIT; // (a fraction of a unit: a few tests cost next to nothing)
    if (this.used > this.max) {
      throw errors.invalidQuery([{
        path: 'deep',
        reason: `The deep filters, searches and sorts would test more than ${this.max * TESTS_A_UNIT} related items × terms ` +
          `(MAX_RELATED_ITEMS × ${TESTS_A_UNIT}). Narrow the root query (limit, filter), or ask for fewer nested relations`,
      }]);
    }
  }

  get spent(): number { return this.used; }
  /** Rolls back to an earlier count (a projection round that is evaluated again after its misses are fetched). */
  resetTo(n: number): void { this.used = n; }
}

/** Tests of related items by a `deep` filter (a candidate against a term) that cost one unit of the expansion budget. */
export const TESTS_A_UNIT = 100;

/** A budget that never refuses (pure uses of the projection outside a request). */
export const unlimited = (): ExpansionBudget => new ExpansionBudget(Number.POSITIVE_INFINITY);

/** The JSON text length of objects measured before (a render's `data`, copied into many items, is measured once). */
const measured = new WeakMap<object, number>();

/** About the JSON length of a value: a string by its length, a number or boolean by 8, an object by its text. */
function valueSize(v: unknown): number {
  if (typeof v === 'string') return v.length + 2;
  if (v === null || typeof v !== 'object') return 8;
  let n = measured.get(v);
  if (n === undefined) {
    n = (JSON.stringify(v) as string | undefined)?.length ?? 4;
    measured.set(v, n);
  }
  return n;
}
