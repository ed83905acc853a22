import type { Config } from './schema.js';

/** Legacy route prefixes whose mode ROUTE_MODES may set. */
export const ROUTE_PREFIXES = ['/auth', '/users', '/renders', '/render', '/projects', '/accounts', '/templates'];
export type RouteMode = 'translate' | 'proxy' | 'shadow' | 'compare';

const parsedModes = new WeakMap<Config, Readonly<Record<string, RouteMode>>>();

/**
 * The mode of a route, by the first segment of its **route template** (what the router matched, never the
 * raw URL: `/%72enders` is `/renders`). ROUTE_MODES is parsed once per config.
 */
export function routeMode(c: Config, template: string): RouteMode {
  if (!c.ROUTE_MODES) return 'translate';
  let modes = parsedModes.get(c);
  if (!modes) { modes = JSON.parse(c.ROUTE_MODES) as Record<string, RouteMode>; parsedModes.set(c, modes); }
  // /items/<collection>… (the Directus SDK's paths) follows the mode of /<collection>
  const segments = template.split('?')[0]!.split('/');
  const prefix = `/${(segments[1] === 'items' ? segments[2] : segments[1]) ?? ''}`;
  return Object.hasOwn(modes, prefix) ? (modes[prefix] as RouteMode) : 'translate';
}

/** True when the prefix is passed through to the legacy backend (no translated route is registered). */
export function proxied(c: Config, template: string): boolean {
  return !!c.LEGACY_BASE_URL && routeMode(c, template) === 'proxy';
}

/** True when a route's requests are answered by the legacy backend (our authentication does not apply). */
export function legacyAnswers(c: Config, template: string): boolean {
  const m = routeMode(c, template);
  return m === 'proxy' || m === 'shadow';
}
