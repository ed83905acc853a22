import type { FastifyInstance } from 'fastify';
import { isInternal } from '../compare/legacy-side.js';
import { legacyAnswers } from '../config/route-modes.js';
import type { Deps } from '../deps.js';
import { errors } from '../errors/catalog.js';
import { routeFacts } from '../auth/route-facts.js';
import { clientId } from '../auth/client-id.js';
import { refusalOf } from '../deprecate/rules.js';

/**
 * The deprecation rules on the request path (registered after authentication): a legacy request the gateway answers,
 * of a known client, that a rule matches carries the rule's Deprecation, Sunset and Link headers — its answer is
 * otherwise unchanged; inside a brownout or past the sunset it is refused with 410 DEPRECATED before anything is done
 * (a write's body is not even read). Observe mode counts what would have been refused and lets it through.
 * Also notes every legacy route as it is registered, so a rule naming no route is refused when it is set.
 */
export function registerDeprecations(app: FastifyInstance, deps: Pick<Deps, 'deprecations' | 'config' | 'clock' | 'mappings'>): void {
  const d = deps.deprecations;
  app.addHook('onRoute', (route) => {
    // (operator routes are told apart by their plugin's own onRoute hook, which runs after this one)
    if ((route.config?.access ?? 'legacy') !== 'legacy' || route.url.startsWith('/_gateway/')) return;
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) if (m !== 'OPTIONS' && m !== 'HEAD') d.routes.add(`${m} ${route.url}`);
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (d.empty) { done(); return; }
    const facts = routeFacts(request);
    const p = request.principal;
    const template = facts.url;
    if (!p || !template || facts.access !== 'legacy' || legacyAnswers(deps.config, template) || isInternal(request.headers)) { done(); return; }
    // the client as the migration report names it: `user:<uuid>` or `static:<token id>`, `~` its User-Agent family
    const [principal = '', family = 'none'] = clientId({ via: p.via, userId: p.user.id, ...(p.tokenId ? { tokenId: p.tokenId } : {}) },
      request.headers['user-agent'], deps.mappings.userAgentFamilies).split('~');
    const now = deps.clock.now();
    const method = request.method === 'HEAD' ? 'GET' : request.method; // a HEAD is its GET without the body
    const v = d.decide(method, template, principal, family, now);
    if (!v) { done(); return; }
    if (v.refuse) {
      const r = refusalOf(v, `${method} ${template}`, now);
      done(errors.deprecated(r.message, r.extensions, r.headers));
      return;
    }
    for (const [k, value] of Object.entries(v.rule.headers)) void reply.header(k, value);
    done();
  });
}
