import { itemBytes, itemBytesInTurns } from '../lib/item-bytes.js';

/**
 * An item already serialised, as UTF-8 bytes: entries waiting in merge and scan buffers are kept so, off the V8 heap,
 * and streamed answers write them as they are.
 */
export class RawJson {
  constructor(readonly json: Uint8Array) {}
  static of(value: unknown): RawJson {
    return new RawJson(itemBytes(value) ?? Buffer.from('null'));
  }
  /** `of` for a value that may be large: written a slice a turn of the event loop at a time (src/lib/json-in-turns.ts). */
  static async inTurns(value: unknown): Promise<RawJson> {
    return new RawJson((await itemBytesInTurns(value)) ?? Buffer.from('null'));
  }
  /** The item itself, parsed back from its bytes. */
  value(): unknown {
    return JSON.parse(Buffer.from(this.json.buffer, this.json.byteOffset, this.json.byteLength).toString('utf8'));
  }
}

/** An item of a streamed answer as a value: a kept serialised item is parsed back, any other item is given as it is. */
export function plainItem(item: unknown): unknown {
  return item instanceof RawJson ? item.value() : item;
}

/** A streamed answer's items as values, for every reader that is not the JSON body's writer (exports, writes by query). */
export async function* plainItems(items: AsyncIterable<unknown>): AsyncGenerator<unknown> {
  for await (const item of items) yield plainItem(item);
}
