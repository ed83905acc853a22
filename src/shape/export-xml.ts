import { pace } from '../lib/pace.js';

/**
 * Directus 10.10's `?export=xml`: `<?xml version='1.0'?>`, then a `data` element holding one `data` element per item
 * (a single item's file: the item's fields directly in `data`). Every value is an element named after its key; a plain
 * object nests its keys, an array repeats its key once per member (an empty array writes nothing), `null` is the text
 * `null`, an empty text or object a self-closing tag; four spaces a level, an element holding only text on one line.
 * Text escapes `&`, `<` and the `>` of `]]>`. Where Directus would fail (a character XML does not allow, a key that is no
 * XML name) the character is written U+FFFD / the name's bad characters `_`: a file, never a 500.
 */

const INDENT = '    ';

/** Characters XML 1.0 allows (a lone surrogate does not count): everything else becomes U+FFFD. */
// eslint-disable-next-line no-control-regex
const BAD_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const NAME_CHARS = ':A-Z_a-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F'
  + '\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD';
const NAME_START = new RegExp(`^[${NAME_CHARS}]`);
const NAME_REST = new RegExp(`[^${NAME_CHARS}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040]`, 'g');

const HAS_BAD_CHAR = new RegExp(BAD_CHAR.source, 'u');

/**
 * A value as XML text. (Each rewrite only when the text needs it, and by splitting, not a regular expression: a 16 MB
 * text of `&` took 6 s: attack pass 9.)
 */
function text(value: unknown): string {
  let s = String(value);
  if (HAS_BAD_CHAR.test(s)) s = s.replace(BAD_CHAR, '\uFFFD');
  if (s.includes('&')) s = s.split('&').join('&amp;');
  if (s.includes('<')) s = s.split('<').join('&lt;');
  if (s.includes(']]>')) s = s.split(']]>').join(']]&gt;');
  return s;
}

function xmlName(key: string): string {
  const rest = key.replace(NAME_REST, '_');
  return rest.length > 0 && NAME_START.test(rest) ? rest : `_${rest}`;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The elements `value` writes under the key `name`, each on its own line at `indent`. */
function elements(name: string, value: unknown, indent: string, out: string[]): void {
  if (value === undefined) return;
  if (Array.isArray(value)) {
    // each member is an element of the array's key; a member that is itself an array repeats the key again
    for (const member of value) elements(name, member, indent, out);
    return;
  }
  out.push(`\n${indent}${element(name, value, indent)}`);
}

/** One element: `<name>text</name>`, `<name/>`, or its children each on a line of their own. */
function element(name: string, value: unknown, indent: string): string {
  const tag = xmlName(name);
  if (isPlainObject(value)) {
    const children: string[] = [];
    for (const key of Object.keys(value)) elements(key, value[key], indent + INDENT, children);
    return children.length === 0 ? `<${tag}/>` : `<${tag}>${children.join('')}\n${indent}</${tag}>`;
  }
  const t = text(value);
  return t === '' ? `<${tag}/>` : `<${tag}>${t}</${tag}>`;
}

const DECLARATION = "<?xml version='1.0'?>";

/** A single item's file (an item route): the item's fields in `data`. */
export function xmlExportOne(item: unknown): string {
  return `${DECLARATION}\n${element('data', item ?? null, '')}`;
}

/** The items' file, written an item at a time (the same bytes as the whole array written at once). */
export async function* xmlExport(items: AsyncIterable<unknown> | Iterable<unknown>): AsyncGenerator<string> {
  let first = true;
  for await (const item of items) {
    const wait = pace();
    if (wait) await wait;
    const out: string[] = [];
    elements('data', item, INDENT, out);
    if (out.length === 0) continue;
    yield `${first ? `${DECLARATION}\n<data>` : ''}${out.join('')}`;
    first = false;
  }
  yield first ? `${DECLARATION}\n<data/>` : '\n</data>';
}
