/** Legacy route prefixes whose mode ROUTE_MODES may set. */
export const ROUTE_PREFIXES = ['/auth', '/users', '/renders', '/render', '/projects', '/accounts', '/templates'];
const MODES = ['translate', 'proxy', 'shadow', 'compare'] as const;
export type RouteMode = (typeof MODES)[number];
/** Route prefix → mode, as ROUTE_MODES sets them (prefixes it does not name are translated). */
export type RouteModes = Readonly<Record<string, RouteMode>>;

/** What the mode helpers read of the configuration. */
interface ModeSettings { readonly routeModes: RouteModes; readonly LEGACY_BASE_URL?: string | undefined }

/** ROUTE_MODES (JSON), parsed once by the configuration: the modes, and every problem found in them. */
export function parseRouteModes(json: string | undefined, legacyBase: string | undefined): { modes: RouteModes; problems: string[] } {
  if (!json) return { modes: {}, problems: [] };
  let raw: unknown;
  try { raw = JSON.parse(json); } catch { return { modes: {}, problems: ['ROUTE_MODES: not valid JSON'] }; }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { modes: {}, problems: ['ROUTE_MODES: must be a JSON object of route prefix → mode'] };
  const problems: string[] = [];
  const modes: Record<string, RouteMode> = Object.create(null) as Record<string, RouteMode>;
  for (const [prefix, mode] of Object.entries(raw)) {
    if (!ROUTE_PREFIXES.includes(prefix)) problems.push(`ROUTE_MODES: unknown route prefix "${prefix}" (one of ${ROUTE_PREFIXES.join(', ')})`);
    else if (!(MODES as readonly unknown[]).includes(mode)) problems.push(`ROUTE_MODES: "${prefix}" has unknown mode "${String(mode)}"`);
    else modes[prefix] = mode as RouteMode;
  }
  if (Object.values(modes).some((m) => m !== 'translate') && !legacyBase) {
    problems.push('LEGACY_BASE_URL: required when ROUTE_MODES uses proxy, shadow or compare');
  }
  return { modes: Object.freeze(modes), problems };
}

/**
 * The mode of a route, by the first segment of its **route template** (what the router matched, never the
 * raw URL: `/%72enders` is `/renders`).
 */
export function routeMode(c: ModeSettings, template: string): RouteMode {
  // (asked several times a request: each set of modes keeps what it answered, per template — a route's, so a few dozen)
  let known = answered.get(c.routeModes);
  if (!known) answered.set(c.routeModes, (known = new Map()));
  let mode = known.get(template);
  if (mode === undefined) {
    // /items/<collection>… (the Directus SDK's paths) follows the mode of /<collection>
    const segments = template.split('?')[0]!.split('/');
    const prefix = `/${(segments[1] === 'items' ? segments[2] : segments[1]) ?? ''}`;
    mode = Object.hasOwn(c.routeModes, prefix) ? (c.routeModes[prefix] as RouteMode) : 'translate';
    if (known.size >= KNOWN_TEMPLATES) known.clear();
    known.set(template, mode);
  }
  return mode;
}

/** Route templates whose mode each set of modes keeps (there are fewer routes). */
const KNOWN_TEMPLATES = 256;
const answered = new WeakMap<RouteModes, Map<string, RouteMode>>();

/** True when some route is answered or compared by the legacy side (the modes machinery is needed). */
export function anyLegacyMode(c: ModeSettings): boolean {
  return !!c.LEGACY_BASE_URL && Object.values(c.routeModes).some((m) => m !== 'translate');
}

/** True when the prefix is passed through to the legacy backend (no translated route is registered). */
export function proxied(c: ModeSettings, template: string): boolean {
  return !!c.LEGACY_BASE_URL && routeMode(c, template) === 'proxy';
}

/** True when a route's requests are answered by the legacy backend (our authentication does not apply). */
export function legacyAnswers(c: ModeSettings, template: string): boolean {
  const m = routeMode(c, template);
  return m === 'proxy' || m === 'shadow';
}
