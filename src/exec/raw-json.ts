import { itemBytes } from './item-json.js';

/**
 * An item already serialised, as UTF-8 bytes: entries waiting in merge and scan buffers are kept so, off the V8 heap,
 * and streamed answers write them as they are.
 */
export class RawJson {
  constructor(readonly json: Uint8Array) {}
  static of(value: unknown): RawJson {
    return new RawJson(itemBytes(value) ?? Buffer.from('null'));
  }
}
