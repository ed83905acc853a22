/**
 * JSON.stringify of a large value written a slice at a time, a turn of the event loop between slices: one item of many
 * MB (a render embedding its project's renders, each with its data) was serialised, measured and encoded in one turn,
 * and every other request waited 0.4–0.75 s (attack pass 10, M). The text is exactly what JSON.stringify writes — the
 * same members left out, `toJSON` called with its key, `null` for what has no JSON in an array, a TypeError for a
 * cycle or a BigInt — and a small value is handed to JSON.stringify itself (`largeValue` says which).
 */

/** About how many characters are written in one turn. */
export const SLICE_CHARS = 256 * 1024;

/** Whether `value` holds more than `most` values, containers and leaves (a probe that stops there): worth writing in turns. */
export function largeValue(value: unknown, most = 20_000): boolean {
  let seen = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (++seen > most) return true;
    if (typeof v === 'string') {
      if (v.length > SLICE_CHARS) return true;
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      seen += v.length;
      if (seen > most) return true;
      for (const x of v) if (typeof x === 'object' && x !== null) stack.push(x);
      continue;
    }
    for (const k of Object.keys(v)) {
      const x = (v as Record<string, unknown>)[k];
      if (typeof x === 'object' && x !== null) stack.push(x);
      else if (typeof x === 'string' && x.length > SLICE_CHARS) return true;
      else seen++;
    }
  }
  return false;
}

/** JSON.stringify(value) as UTF-8 bytes, written `slice` characters a turn at a time (undefined: the value has no JSON). */
export async function jsonInTurns(value: unknown, slice = SLICE_CHARS): Promise<Buffer | undefined> {
  const parts: Buffer[] = [];
  let text: string[] = [];
  let chars = 0;
  let any = false;
  for (const piece of pieces(toJson(value, ''), new Set())) {
    any = true;
    text.push(piece);
    chars += piece.length;
    if (chars >= slice) {
      parts.push(Buffer.from(text.join('')));
      text = [];
      chars = 0;
      await new Promise<void>((turn) => setImmediate(turn));
    }
  }
  if (!any) return undefined;
  if (text.length > 0) parts.push(Buffer.from(text.join('')));
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

/** What JSON.stringify calls with a member's key: the value's `toJSON`, when it has one. */
function toJson(value: unknown, key: string): unknown {
  if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
    const f = (value as { toJSON?: unknown }).toJSON;
    if (typeof f === 'function') return (f as (k: string) => unknown).call(value, key);
  }
  return value;
}

/** Whether JSON.stringify leaves the value out of an object (and writes null for it in an array). */
const noJson = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** The pieces of the JSON text of `v` — a value `toJSON` was asked of already — in order (none: it has no JSON). */
function* pieces(v: unknown, open: Set<object>): Generator<string> {
  if (noJson(v)) return;
  if (typeof v !== 'object' || v === null || v instanceof Number || v instanceof String || v instanceof Boolean) {
    yield JSON.stringify(v); // (a BigInt throws here, as JSON.stringify does)
    return;
  }
  if (open.has(v)) throw new TypeError('Converting circular structure to JSON');
  open.add(v);
  if (Array.isArray(v)) {
    yield '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) yield ',';
      const member = toJson(v[i], String(i));
      if (noJson(member)) yield 'null';
      else yield* pieces(member, open);
    }
    yield ']';
  } else {
    yield '{';
    let first = true;
    for (const k of Object.keys(v)) {
      const member = toJson((v as Record<string, unknown>)[k], k);
      if (noJson(member)) continue;
      yield `${first ? '' : ','}${JSON.stringify(k)}:`;
      first = false;
      yield* pieces(member, open);
    }
    yield '}';
  }
  open.delete(v);
}
