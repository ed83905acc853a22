/**
 * A render's output URLs held compactly in memory. Each URL is cut into a template most renders share (the URL with
 * the render's id, its `expires` value and its signature — the last long query value — cut out) and what varies per
 * render (the signature). A render keeps one shape number (its variants and their templates), its expiry and one
 * string of what varies; hexadecimal signatures are packed two digits to a character. Exact round trip, pure data:
 * what does not fit (odd URLs, too many distinct templates) is kept whole.
 */

const ID = '\u0001';
const EXP = '\u0002';
const VAR = '\u0003';
const RESERVED = /[\u0001-\u0003]/;
/** Distinct templates / shapes a codec learns before it keeps further URLs whole (a team has a handful). */
const MAX_TEMPLATES = 512;
const MAX_SHAPES = 4096;
const EXPIRES = /([?&][Ee]xpires=)(\d{9,11})(?=[&#]|$)/;
const LONG_VALUE = /([?&][^=&#]*=)([^&#\u0001-\u0003]{16,})(?=[&#]|$)/g;
const HEX = /^(?:[0-9a-f]{2})+$/;

/** A template as its literal parts and placeholders, for a fast rebuild. */
type Part = string | typeof ID | typeof EXP | typeof VAR;

interface Shape {
  readonly variants: readonly string[];
  readonly templates: readonly number[];
  /** Length of each variant's varying part as held (packed: half the hex digits). */
  readonly lengths: readonly number[];
  readonly packed: boolean;
  /** The variant names, sorted and joined: what the sync compares. */
  readonly key: string;
}

/** What a render holds of its output: `shape` -1 = no output, -2 = kept whole (`rest` is its JSON). */
export interface PackedOutput {
  readonly shape: number;
  readonly exp: number;
  readonly rest: string | null;
}

export const NO_OUTPUT: PackedOutput = { shape: -1, exp: Number.NaN, rest: null };

export class OutputCodec {
  private readonly templates: Part[][] = [];
  private readonly templateIds = new Map<string, number>();
  private readonly shapes: Shape[] = [];
  private readonly shapeIds = new Map<string, number>();

  encode(renderId: string, output: Readonly<Record<string, string>> | undefined): PackedOutput {
    if (!output) return NO_OUTPUT;
    const variants = Object.keys(output);
    let exp = Number.NaN;
    const templates: number[] = [];
    const values: string[] = [];
    for (const v of variants) {
      const url = output[v] as string;
      if (RESERVED.test(url) || RESERVED.test(v)) return this.whole(output);
      let t = renderId ? url.split(renderId).join(ID) : url;
      const m = EXPIRES.exec(t);
      if (m) {
        const n = Number(m[2]);
        if (Number.isNaN(exp) && String(n) === m[2]) exp = n;
        if (String(exp) === m[2]) t = `${t.slice(0, m.index)}${m[1]}${EXP}${t.slice(m.index + m[0].length)}`;
      }
      let value = '';
      let last: RegExpExecArray | null = null;
      LONG_VALUE.lastIndex = 0;
      for (let x = LONG_VALUE.exec(t); x; x = LONG_VALUE.exec(t)) last = x;
      if (last) {
        value = last[2] as string;
        t = `${t.slice(0, last.index)}${last[1]}${VAR}${t.slice(last.index + last[0].length)}`;
      }
      const id = this.template(t);
      if (id < 0) return this.whole(output);
      templates.push(id);
      values.push(value);
    }
    const packed = values.length > 0 && values.every((x) => HEX.test(x));
    const held = packed ? values.map(packHex) : values;
    const key = `${variants.join('\u0000')}\u0004${templates.join(',')}\u0004${held.map((x) => x.length).join(',')}\u0004${packed ? 1 : 0}`;
    let shape = this.shapeIds.get(key);
    if (shape === undefined) {
      if (this.shapes.length >= MAX_SHAPES) return this.whole(output);
      shape = this.shapes.length;
      this.shapes.push({ variants, templates, lengths: held.map((x) => x.length), packed, key: [...variants].sort().join(',') });
      this.shapeIds.set(key, shape);
    }
    return { shape, exp, rest: held.join('') };
  }

  decode(renderId: string, p: PackedOutput): Record<string, string> | undefined {
    if (p.shape === -1) return undefined;
    if (p.shape === -2) return JSON.parse(p.rest as string) as Record<string, string>;
    const s = this.shapes[p.shape] as Shape;
    const out: Record<string, string> = {};
    let at = 0;
    const rest = p.rest ?? '';
    for (let k = 0; k < s.variants.length; k++) {
      const len = s.lengths[k] as number;
      const held = rest.slice(at, at + len);
      at += len;
      const value = s.packed ? unpackHex(held) : held;
      let url = '';
      for (const part of this.templates[s.templates[k] as number] as Part[]) {
        url += part === ID ? renderId : part === EXP ? String(p.exp) : part === VAR ? value : part;
      }
      out[s.variants[k] as string] = url;
    }
    return out;
  }

  /** The variant names of a held output, sorted and joined ('' when none). */
  variantsKey(p: PackedOutput): string {
    if (p.shape === -1) return '';
    if (p.shape === -2) return Object.keys(JSON.parse(p.rest as string) as object).sort().join(',');
    return (this.shapes[p.shape] as Shape).key;
  }

  /** Whether a held output has a URL for `variant`. */
  has(p: PackedOutput, variant: string): boolean {
    if (p.shape === -1) return false;
    if (p.shape === -2) return Object.hasOwn(JSON.parse(p.rest as string) as object, variant);
    return (this.shapes[p.shape] as Shape).variants.includes(variant);
  }

  private template(t: string): number {
    const known = this.templateIds.get(t);
    if (known !== undefined) return known;
    if (this.templates.length >= MAX_TEMPLATES) return -1;
    const parts = t.split(/([\u0001-\u0003])/).filter((x) => x !== '') as Part[];
    this.templates.push(parts);
    this.templateIds.set(t, this.templates.length - 1);
    return this.templates.length - 1;
  }

  private whole(output: Readonly<Record<string, string>>): PackedOutput {
    return { shape: -2, exp: Number.NaN, rest: JSON.stringify(output) };
  }
}

function packHex(hex: string): string {
  let s = '';
  for (let i = 0; i < hex.length; i += 2) s += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
  return s;
}

const HEX_PAIRS = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function unpackHex(s: string): string {
  let hex = '';
  for (let i = 0; i < s.length; i++) hex += HEX_PAIRS[s.charCodeAt(i)];
  return hex;
}
