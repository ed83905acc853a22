import { clientParam } from './client-param.js';
import type { FastifyInstance } from 'fastify';
import { operatorRoutes } from '../auth/guards.js';
import type { Deps } from '../deps.js';
import { progressOf } from '../deprecate/progress.js';
import { RULE_LIMITS } from '../deprecate/rules.js';
import { RulesError } from '../deprecate/service.js';
import { errors } from '../errors/catalog.js';

/** The deprecation rules (operator token): set them all at once, read them back, and each rule's calls per client and day. */
export function registerDeprecationRoutes(app: FastifyInstance, deps: Pick<Deps, 'config' | 'deprecations' | 'clock'>): void {
  const d = deps.deprecations;
  // the rules as set (a body PUT takes back as it is), and under `data`, as every operator route answers, with when each id was first set
  const answer = () => {
    const stored = d.list();
    const rules = stored.map((s) => s.rule);
    return { rules, data: { rules, set_at: Object.fromEntries(stored.map((s) => [s.id, new Date(s.setAt).toISOString()])) } };
  };
  operatorRoutes(app, deps.config.GATEWAY_ADMIN_TOKEN, (op) => {
    op.get('/_gateway/deprecations', async () => answer());
    op.put('/_gateway/deprecations', { bodyLimit: RULE_LIMITS.bodyBytes }, async (request) => {
      try {
        await d.replace(request.body);
      } catch (e) {
        if (!(e instanceof RulesError)) throw e;
        const first = e.problems[0] ?? { path: '(body)', message: 'is not a rules body' };
        throw errors.invalidPayload(`${first.path}: ${first.message}`, { path: first.path, problems: e.problems.slice(0, 20) });
      }
      return answer();
    });
    // per rule and client, the calls since the rule was set, per day (?client=user:<uuid> narrows to one principal's clients)
    op.get('/_gateway/deprecations/progress', async (request) => {
      await d.flush();
      const q = request.query as Record<string, unknown>;
      const client = clientParam(q)?.split('~')[0];
      return { data: progressOf(d.list(), await d.calls(client), deps.clock.now()) };
    });
  });
}
