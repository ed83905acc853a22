import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { FastifyReply } from 'fastify';
import { heldAnswer, heldItems } from '../../src/http/held-answer.js';
import { AnswerMemory } from '../../src/read/in-flight.js';
import { plainItem } from '../../src/exec/raw-json.js';
import type { RequestContext } from '../../src/read/request-context.js';

/**
 * Items answered whole (an aggregate's 40 000 groups) are measured a slice at a time, the event loop turning between
 * slices: measuring them in one go held every other request 0.25 s (attack pass 15's second re-check: 40 000 groups of 22
 * keys, 26.8 MB). Turns are counted, never timed.
 */
/** An answer memory, and a request and reply as the held answer reads them. */
function held() {
  const memory = new AnswerMemory(512 * 1_048_576, 512 * 1_048_576);
  const deps = { answerMemory: memory, config: { MAX_ITEM_MB: 16 } } as never;
  const ctx = { session: async () => ({ partition: 'key' }) } as unknown as RequestContext;
  const raw = Object.assign(new EventEmitter(), { destroyed: false, writableFinished: false });
  return { memory, deps, ctx, raw, reply: { raw } as unknown as FastifyReply };
}

describe('heldItems', () => {
  it('measures a long answer in slices, other work let in between, and holds it whole when it fits', async () => {
    const { memory, deps, ctx, raw, reply } = held();
    const data = Array.from({ length: 40_000 }, (_, i) => ({ id: `group ${i}`, ...Object.fromEntries(Array.from({ length: 22 }, (_, k) => [`k${k}`, `value ${k} of ${i}`])) }));
    let turns = 0;
    let on = true;
    const spin = () => { if (!on) return; turns++; setImmediate(spin); };
    setImmediate(spin);
    const out = await heldItems(deps, ctx, reply, data, true);
    on = false;
    expect(out).toBeUndefined(); // held whole: the array is the answer
    expect(memory.held('key')).toBeGreaterThan(20 * 1_048_576); // (its JSON bytes, counted until the reply closes)
    expect(turns).toBeGreaterThan(5);
    raw.emit('close');
    expect(memory.held('key')).toBe(0);
  });

  it('a page given as a stream (small items awaiting only microtasks) is read and measured a slice at a time (attack pass 16, H: 40 000 in one turn)', async () => {
    const { deps, ctx, raw, reply } = held();
    const items = Array.from({ length: 40_000 }, (_, i) => ({ id: `item ${i}`, title: `title ${i}` }));
    const stream = (async function* () { for (const x of items) yield x; })();
    let turns = 0;
    let on = true;
    const spin = () => { if (!on) return; turns++; setImmediate(spin); };
    setImmediate(spin);
    const out = await heldAnswer(deps, ctx, reply, { data: [], stream, lazy: true }, false, true);
    on = false;
    expect(Array.isArray(out)).toBe(true); // (held whole: it fits)
    expect((out as unknown[]).map(plainItem)).toEqual(items); // (every item, as it was given)
    expect(turns).toBeGreaterThan(5);
    raw.emit('close');
  });
});
