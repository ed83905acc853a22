/**
 * A typed difference at a dotted path (`data[].title`; arrays generalised to `[]` so counts aggregate): what the
 * differ (compare/diff.ts) finds and the comparison store (store/compare.ts) keeps. Here, below both, so the store
 * imports no feature.
 */
export type DiffKind = 'missing' | 'extra' | 'type' | 'value' | 'order' | 'length' | 'status';
export interface Difference {
  readonly path: string;
  readonly kind: DiffKind;
  readonly legacy: unknown;
  readonly translated: unknown;
}
