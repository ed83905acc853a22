/** Dynamic filter values: $NOW, $NOW(±n unit), $CURRENT_USER, $CURRENT_ROLE (Directus adjust-date). */
export interface DynamicContext {
  readonly now: Date;
  readonly userId: string | null;
  readonly roleId: string | null;
  /** Fields of the current user for `$CURRENT_USER.<field>` (Directus ≥ 11.6). */
  readonly user?: Readonly<Record<string, unknown>>;
}

const UNITS: Readonly<Record<string, 'ms' | 's' | 'm' | 'h' | 'd' | 'w' | 'mo' | 'y'>> = {
  ms: 'ms', msec: 'ms', msecs: 'ms', millisecond: 'ms', milliseconds: 'ms',
  s: 's', sec: 's', secs: 's', second: 's', seconds: 's',
  m: 'm', min: 'm', mins: 'm', minute: 'm', minutes: 'm',
  h: 'h', hr: 'h', hrs: 'h', hour: 'h', hours: 'h',
  d: 'd', day: 'd', days: 'd',
  w: 'w', week: 'w', weeks: 'w',
  mo: 'mo', mth: 'mo', month: 'mo', months: 'mo',
  y: 'y', yr: 'y', yrs: 'y', year: 'y', years: 'y',
};
const MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

function addMonths(d: Date, months: number): Date {
  const out = new Date(d.getTime());
  const day = out.getUTCDate();
  out.setUTCDate(1);
  out.setUTCMonth(out.getUTCMonth() + months);
  const last = new Date(Date.UTC(out.getUTCFullYear(), out.getUTCMonth() + 1, 0)).getUTCDate();
  out.setUTCDate(Math.min(day, last));
  return out;
}

/** `$NOW(-1 year)` adjustment → the adjusted instant, or undefined when unparsable. Default unit: days. */
/** Longest adjustment read: `-123456789.123456 milliseconds` fits; longer input is refused before any matching. */
export const MAX_ADJUSTMENT_LENGTH = 48;

export function adjustDate(now: Date, adjustment: string): Date | undefined {
  if (adjustment.length > MAX_ADJUSTMENT_LENGTH) return undefined;
  // one way to match each input (no nested or adjacent quantifiers over the same characters): linear time
  const m = /^ *([+-]?(?:\d+(?:\.\d+)?|\.\d+)) *([a-z]+)? *$/i.exec(adjustment);
  if (!m) return undefined;
  const amount = Number(m[1]);
  const unit = m[2] === undefined ? 'd' : UNITS[m[2].toLowerCase()];
  if (!unit || !Number.isFinite(amount)) return undefined;
  if (unit === 'mo') return addMonths(now, Math.trunc(amount));
  if (unit === 'y') return addMonths(now, Math.trunc(amount) * 12);
  return new Date(now.getTime() + amount * MS[unit]);
}

export type Resolved = { ok: true; value: unknown; isDate?: boolean } | { ok: false; reason: string };

/** Resolves a `$…` variable; other values pass through unchanged. */
export function resolveDynamic(value: unknown, ctx: DynamicContext): Resolved {
  if (typeof value !== 'string' || !value.startsWith('$')) return { ok: true, value };
  if (value === '$NOW') return { ok: true, value: ctx.now.toISOString(), isDate: true };
  const now = /^\$NOW\((.*)\)$/.exec(value);
  if (now) {
    const d = adjustDate(ctx.now, now[1] as string);
    if (!d || Number.isNaN(d.getTime())) {
      const shown = (now[1] as string).length > MAX_ADJUSTMENT_LENGTH ? `longer than ${MAX_ADJUSTMENT_LENGTH} characters` : `"${now[1]}"`;
      return { ok: false, reason: `Invalid $NOW adjustment ${shown}: use a sign, a number and a unit such as "-30 days" (send + as %2B)` };
    }
    return { ok: true, value: d.toISOString(), isDate: true };
  }
  if (value === '$CURRENT_USER') return { ok: true, value: ctx.userId };
  if (value === '$CURRENT_ROLE') return { ok: true, value: ctx.roleId };
  const cu = /^\$CURRENT_USER\.(\w+)$/.exec(value);
  if (cu) return { ok: true, value: ctx.user?.[cu[1] as string] ?? null };
  return { ok: true, value };
}
