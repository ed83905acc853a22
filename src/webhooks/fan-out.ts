import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ReplicaService } from '../replica/service.js';
import type { V1Cache } from '../live/v1-cache.js';
import type { ChangeBus } from '../store/changes.js';
import type { WebhookReceiver } from './receiver.js';

/**
 * Where an applied render event goes: the replica has it before the 204 (on this instance at once, on the others
 * through the bus), and it replaces every cached copy of the render on this instance (every key's partition); the
 * other instances drop theirs (their next read fetches the fresh one).
 */
export function fanOut(receiver: WebhookReceiver, o: { replica: ReplicaService | null; cache: V1Cache; bus: ChangeBus; logger: Logger }): void {
  const me = randomUUID();
  receiver.onRender((r) => o.replica?.applyRender(r, { webhook: true }));
  receiver.onRender((r) => {
    o.cache.replaceEverywhere(`render:${r.id}`, r, o.cache.renderTtl(r));
    void o.bus.publish('render_cache', `${me} ${r.id}`).catch((e: unknown) => o.logger.warn({ err: e }, 'could not tell the other instances'));
    o.logger.debug({ render: r.id, status: r.status }, 'webhook applied to caches');
  });
  o.bus.on('render_cache', (key) => {
    const [from, id] = key.split(' ');
    if (from !== me && id) o.cache.deleteEverywhere(`render:${id}`);
  });
}
