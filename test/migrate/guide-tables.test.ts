import { describe, expect, it } from 'vitest';
import { RECORD_RESOURCES, RESOURCE_TRAITS, type OverlayType } from '../../src/query/resources.js';
import { ALL_OVERLAYS } from '../../src/read/context.js';
import { EMBEDDED, RELATION_ID, SORT_FIELD, TRANSLATED, V1_FIELD } from '../../src/migrate/equivalent-model.js';
import { MAIN_CALLS } from '../../src/migrate/snippet-common.js';
import { isGuideResource, V1_RESOURCES } from '../../src/migrate/v1-resources.js';

/**
 * The migration guide's tables keyed by resource cover every resource it describes (the record resources and the user):
 * their types are `Record`s over `GuideResource`, so a new resource is a compile error in each; this holds the values
 * as they run (a cast would pass the compiler).
 */
const GUIDE: string[] = [...RECORD_RESOURCES, 'user'].sort();

describe('the guide\'s tables by resource', () => {
  it('each has an entry for every resource the guide describes, and none other', () => {
    for (const [name, table] of Object.entries({ MAIN_CALLS, TRANSLATED, V1_FIELD, RELATION_ID, EMBEDDED, SORT_FIELD })) {
      expect(Object.keys(table).sort(), name).toEqual(GUIDE);
    }
    expect(Object.keys(V1_RESOURCES).sort()).toEqual([...RECORD_RESOURCES].sort());
    expect(GUIDE.every(isGuideResource)).toBe(true);
    expect(['renders', 'constructor', '', null, undefined].some(isGuideResource)).toBe(false);
  });

  it('a resource\'s id is always one of its translated fields, read from v1\'s id', () => {
    for (const r of GUIDE.filter((x) => x !== 'user')) {
      expect(TRANSLATED[r as keyof typeof TRANSLATED], r).toContain('id');
      expect(V1_FIELD[r as keyof typeof V1_FIELD].id, r).toBe('id');
    }
  });

  it('the overlay types are exactly the resources whose traits keep overlays', () => {
    const kept: OverlayType[] = [...ALL_OVERLAYS];
    expect(kept.sort()).toEqual(RECORD_RESOURCES.filter((r) => RESOURCE_TRAITS[r].overlays).sort());
    expect(kept).toContain('render');
    expect(kept).not.toContain('template');
  });
});
