/**
 * The rotation of a team's quiet projects: which projects' heads one sync checks. The active projects' first, at every
 * sync; then each quiet project when its due time has come since the team's last sync. A project's due times are the
 * moments t (absolute, in milliseconds) with t ≡ its phase modulo the cycle, its phase a hash of its id: every instance
 * computes the same rotation from the team's last sync start alone (the store's, whichever instance ran it; an older
 * one only widens the window), whatever the team's projects are. Cycles are 1 s × a power of two, so the due times of
 * a longer cycle are due times of every shorter one: whatever cycles the syncs used, a quiet project is checked by the
 * first sync past one due time of the longest of them. A sync that comes late takes every check due meanwhile; past a
 * whole cycle, every project.
 */

/** The shortest cycle; every cycle is this × a power of two. */
export const CYCLE_UNIT_MS = 1_000;

/** The longest cycle considered (about 48 days). */
const CYCLE_MAX_MS = CYCLE_UNIT_MS * 2 ** 22;

/** A project's place in every cycle (FNV-1a of its id: spread, and the same on every instance). */
export function phaseHash(projectId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < projectId.length; i++) {
    h ^= projectId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The cycles a rotation may use, shortest first. */
export function* cycles(): Generator<number> {
  for (let c = CYCLE_UNIT_MS; c <= CYCLE_MAX_MS; c *= 2) yield c;
}

/** The phases of these hashes in a cycle, sorted (what `dueMax` reads). */
export function phasesIn(hashes: readonly number[], cycleMs: number): number[] {
  return hashes.map((h) => h % cycleMs).sort((a, b) => a - b);
}

/**
 * The most due checks any window of `windowMs` holds with these phases (`phasesIn`) and this cycle: whole cycles count
 * every project; the rest of the window, the most phases an arc of that length covers (exact).
 */
export function dueMax(phases: readonly number[], cycleMs: number, windowMs: number): number {
  const n = phases.length;
  if (n === 0) return 0;
  const whole = Math.floor(windowMs / cycleMs) * n;
  const w = windowMs % cycleMs;
  if (w === 0) return whole;
  // windows (x, x + w]: the most phases in [p, p + w) over the phases p, around the circle
  let most = 0;
  let j = 0;
  for (let i = 0; i < n; i++) {
    if (j < i) j = i;
    while (j < i + n && (phases[j % n] as number) + (j >= n ? cycleMs : 0) < (phases[i] as number) + w) j++;
    most = Math.max(most, j - i);
  }
  return whole + most;
}

/** Whether a phase is due in (from, to] with this cycle. */
const dueIn = (hash: number, cycleMs: number, from: number, to: number): boolean => {
  const phase = hash % cycleMs;
  return Math.floor((to - phase) / cycleMs) > Math.floor((from - phase) / cycleMs);
};

/**
 * The projects whose heads a sync at `now` checks, in order: the active ones (sorted), then the quiet ones due since
 * `lastSyncAt` (every one when there is no rotation — `cycleMs` 0 —, no last sync, or a whole cycle has passed).
 */
export function headsDue(
  projectIds: Iterable<string>, active: ReadonlySet<string>, cycleMs: number, lastSyncAt: number | null, now: number,
): string[] {
  const sorted = [...projectIds].sort();
  const first = sorted.filter((id) => active.has(id));
  const quiet = sorted.filter((id) => !active.has(id));
  if (cycleMs <= 0 || lastSyncAt === null || now - lastSyncAt >= cycleMs) return [...first, ...quiet];
  return [...first, ...quiet.filter((id) => dueIn(phaseHash(id), cycleMs, lastSyncAt, now))];
}

/**
 * How many times the quiet projects' checks fall due in (`from`, `to`] (each once a cycle at its phase: a project due
 * twice counted twice) — at most what the syncs of that window check.
 */
export function quietChecksDue(projectIds: Iterable<string>, active: ReadonlySet<string>, cycleMs: number, from: number, to: number): number {
  if (cycleMs <= 0) return 0;
  let n = 0;
  for (const id of projectIds) {
    if (active.has(id)) continue;
    const phase = phaseHash(id) % cycleMs;
    n += Math.floor((to - phase) / cycleMs) - Math.floor((from - phase) / cycleMs);
  }
  return n;
}

/** Whether a full sync at `now` reads every project's templates: no last full sync here, or a whole period since it. */
const everyTemplate = (cycleMs: number, lastFullAt: number | null, now: number): boolean =>
  cycleMs <= 0 || lastFullAt === null || now - lastFullAt >= cycleMs;

/**
 * The projects whose templates a full sync at `now` reads: those due since this instance's last full sync at their
 * phase of `cycleMs` (TEMPLATES_RECONCILE_MS) — every one when there was none, or a whole period has passed (a
 * trusted team's reconcile, WEBHOOK_RECONCILE_MS apart, reads them all when that is at least the period).
 */
export function templatesDue(projectIds: Iterable<string>, cycleMs: number, lastFullAt: number | null, now: number): string[] {
  const ids = [...projectIds];
  if (everyTemplate(cycleMs, lastFullAt, now)) return ids;
  return ids.filter((id) => dueIn(phaseHash(id), cycleMs, lastFullAt!, now));
}

/** How many `templatesDue` gives, from the projects' phase hashes (`Activity.hashes`): no array, no hashing — asked on reads. */
export function templatesDueCount(hashes: readonly number[], cycleMs: number, lastFullAt: number | null, now: number): number {
  if (everyTemplate(cycleMs, lastFullAt, now)) return hashes.length;
  let n = 0;
  for (const h of hashes) if (dueIn(h, cycleMs, lastFullAt!, now)) n++;
  return n;
}
