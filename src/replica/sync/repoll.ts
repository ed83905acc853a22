import type { V1Session } from '../../v1/client.js';
import { V1NotFoundError } from '../../v1/errors.js';
import { V1_PAGE_MAX, type RenderStatus, type V1Render } from '../../v1/schemas.js';
import type { TeamReplica } from '../team/team-replica.js';

/** The steps of the sync a re-poll uses (its fan-out, its writes). */
export interface RepollSteps {
  /** Bounded fan-out that stops taking items once one has failed. */
  fanOut<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void>;
  /** Writes renders (store first, then memory). */
  put(renders: readonly V1Render[]): Promise<void>;
  /** Writes the renders v1 shows differently from the replica. */
  putChanged(renders: readonly V1Render[]): Promise<void>;
}

/**
 * Renders not yet final, read again: by id, or — when fewer calls — through their projects' lists filtered by status
 * (a render missing from its status's list has moved on and is read by id).
 */
export async function repollMoving(t: TeamReplica, s: V1Session, skip: ReadonlySet<string>, steps: RepollSteps): Promise<void> {
  const ids = t.movingIds().filter((id) => !skip.has(id));
  if (ids.length === 0) return;
  const pairs = new Map<string, { projectId: string; status: RenderStatus; ids: Set<string> }>();
  for (const id of ids) {
    const r = t.renderState(id);
    const projectId = t.projectOf(id);
    if (!r || projectId === undefined) continue;
    const k = `${projectId} ${r.status}`;
    const pair = pairs.get(k) ?? { projectId, status: r.status, ids: new Set<string>() };
    pair.ids.add(id);
    pairs.set(k, pair);
  }
  let byId = ids;
  if (pairs.size < ids.length) {
    const found = new Set<string>();
    await steps.fanOut([...pairs.values()], async (pair) => {
      try {
        const list = (cursor: string | undefined) =>
          s.rendersPage(pair.projectId, { limit: V1_PAGE_MAX, status: pair.status, ...(cursor ? { cursor } : {}) });
        for await (const page of s.pages(list)) {
          for (const r of page) if (pair.ids.has(r.id)) found.add(r.id);
          await steps.putChanged(page);
        }
      } catch (e) {
        if (!(e instanceof V1NotFoundError)) throw e;
      }
    });
    byId = ids.filter((id) => !found.has(id));
  }
  await steps.fanOut(byId, async (id) => {
    try {
      await steps.put([await s.render(id)]);
    } catch (e) {
      if (!(e instanceof V1NotFoundError)) throw e;
    }
  });
}
