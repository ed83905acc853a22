import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { FastifyReply } from 'fastify';
import { heldAnswer, heldItems } from '../../src/http/held-answer.js';
import { AnswerMemory } from '../../src/read/in-flight.js';
import { plainItem, RawJson } from '../../src/exec/raw-json.js';
import { bodyJson, keepJson } from '../../src/lib/item-bytes.js';
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
    // held whole: the items themselves, their texts kept with the array the body is written from
    expect(Array.isArray(out)).toBe(true);
    expect((out as unknown[]).length).toBe(40_000);
    expect((out as unknown[]).every((x, i) => x === data[i])).toBe(true);
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

  it('a page measured whole is written from the texts measured: the body is JSON.stringify of it, fresh, kept and large items alike', async () => {
    const { memory, deps, ctx, raw, reply } = held();
    const items: unknown[] = [
      { id: 'a', title: '🎬 "quoted" \\ \u2028' }, keepJson({ id: 'kept', n: 1 }), { id: 'large', text: 'x'.repeat(300_000) }, { id: 'b', nested: { list: [1, null] } },
    ];
    const stream = (async function* () { for (const x of items) yield x; })();
    const out = (await heldAnswer(deps, ctx, reply, { data: [], stream, lazy: true }, false, true)) as unknown[];
    const expected = JSON.stringify({ meta: { filter_count: 4 }, data: items });
    expect(bodyJson({ meta: { filter_count: 4 }, data: out }).toString()).toBe(expected);
    expect(memory.held('key')).toBe(Buffer.byteLength(JSON.stringify(items)) - 2 - 3); // (each item's bytes: no brackets, no commas)
    raw.emit('close');
    // items built whole (not a page) are written the same way
    const whole = (await heldItems(deps, ctx, reply, items, true)) as unknown[];
    expect(bodyJson({ data: whole }).toString()).toBe(JSON.stringify({ data: items }));
  });

  it('a page past the room one answer may hold streams: the items measured first are given as the bytes measured', async () => {
    const memory = new AnswerMemory(1_048_576, 1_048_576);
    const deps = { answerMemory: memory, config: { MAX_ITEM_MB: 16 } } as never;
    const ctx = { session: async () => ({ partition: 'key' }) } as unknown as RequestContext;
    const raw = Object.assign(new EventEmitter(), { destroyed: false, writableFinished: false });
    const reply = { raw } as unknown as FastifyReply;
    const items = Array.from({ length: 400 }, (_, i) => ({ id: `item ${i}`, text: `${i} `.repeat(2_000) }));
    const stream = (async function* () { for (const x of items) yield x; })();
    const out = await heldAnswer(deps, ctx, reply, { data: [], stream, lazy: true }, false, true);
    expect(Array.isArray(out)).toBe(false);
    const given: unknown[] = [];
    for await (const x of out as AsyncIterable<unknown>) given.push(x);
    expect(given.length).toBe(400);
    expect(given.every((x) => x instanceof RawJson)).toBe(true);
    expect(given.map((x) => new TextDecoder().decode((x as RawJson).json))).toEqual(items.map((x) => JSON.stringify(x)));
    raw.emit('close');
  });
});
