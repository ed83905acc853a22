import { percentDecoded } from '../lib/percent.js';

/*
 * Secrets out of free text: the request lines and error messages the logger writes, and the comparison records
 * (`compare/redact.ts`). Every rule is linear in the text, and a URL is scrubbed within its first SCRUB_CHARS.
 */

const SECRET_IN_TEXT = [
  /sk_[A-Za-z0-9]{32}/g,
  /Bearer\s+[A-Za-z0-9._~+/=-]+/gi,
];

/**
 * A JWT (the gateway's access tokens, wherever they stand): `eyJ` and at least four characters, a dot, four more, a dot
 * and its last part, found in one pass over each run of JWT characters — a pattern tried at every `eyJ` of a 15 KB path
 * of `eyJeyJ…` looked to the run's end from each (373–406 ms a request, 16 anonymous connections held others' reads
 * 16 s: attack pass 32, H-1).
 */
function redactJwts(text: string): string {
  if (!text.includes('eyJ')) return text;
  return text.replace(/[A-Za-z0-9_.-]+/g, (run) => {
    const parts = run.split('.');
    let out = '';
    for (let k = 0; k < parts.length; k++) {
      const head = parts[k]!;
      const at = head.indexOf('eyJ');
      // (the earliest eyJ has the longest head; a JWT needs a head of 4 after it, a body of 4 and a last part)
      if (at >= 0 && head.length - at - 3 >= 4 && k + 2 < parts.length && parts[k + 1]!.length >= 4) {
        out += `${k > 0 ? '.' : ''}${head.slice(0, at)}[Redacted]`;
        k += 2; // (the body and the last part)
        continue;
      }
      out += `${k > 0 ? '.' : ''}${head}`;
    }
    return out;
  });
}

/** Query parameters whose values are credentials, by their name *after* decoding (as the gateway reads them). */
const SECRET_PARAMS = new Set(['access_token', 'refresh_token', 'password', 'token', 'api_key', 'key', 'secret', 'link']);

function decodedName(raw: string): string {
  const plus = raw.replaceAll('+', ' ');
  const name = percentDecoded(plus) ?? plus;
  const bracket = name.indexOf('[');
  return (bracket > 0 ? name.slice(0, bracket) : name).trim().toLowerCase();
}

/** True when a parameter or field of this name holds a credential (`access_token`, `%61ccess_token`, `token[]` …). */
export function isSecretName(raw: string): boolean {
  return SECRET_PARAMS.has(decodedName(raw));
}

/**
 * The most of a query (or fragment) the log scrubs and writes: SCRUB_CHARS characters in at most SCRUB_PAIRS name=value
 * pairs; a longer one is not written, only its length (no line to read, and each pair and escape is work: a 15 KB query of
 * 5 000 `%=` pairs held the event loop 35–47 ms a request, 16 anonymous connections stalled other tenants for seconds —
 * attack pass 30, H-1).
 */
export const SCRUB_CHARS = 4096;
export const SCRUB_PAIRS = 256;

/** Redacts the values of credential parameters in a query string, whatever the spelling of their names. */
function scrubQuery(query: string): string {
  const pairs = query.length > SCRUB_CHARS ? [] : query.split('&', SCRUB_PAIRS + 1);
  if (pairs.length === 0 || pairs.length > SCRUB_PAIRS) return `[Redacted: ${query.length} characters]`;
  return pairs.map((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 0) return pair;
    return SECRET_PARAMS.has(decodedName(pair.slice(0, eq))) ? `${pair.slice(0, eq)}=${OWN_MARK}` : pair;
  }).join('&');
}

/**
 * What a text must contain for any rule below to change it: a secret parameter's name (each contains one of these
 * words: token, password, key, secret, link), a key prefix, a bearer, a JWT's head, or an encoding or a character
 * beyond ASCII that could spell one.
 */
const PLAIN_SUSPECT = /token|password|key|secret|link|sk_|bearer|eyj|[%+]|[^\x00-\x7f]/i;

/** The longest of SECRET_PARAMS (a longer run of letters is no credential's name). */
const NAME_MOST = Math.max(...[...SECRET_PARAMS].map((n) => n.length));
/**
 * A credential's long name anywhere, whatever stands around it (`idaccess_token=`, `access_token1=`, `access_token&#61;`,
 * `access_token:`): a client's mangled URL carries no such name but to carry a credential — attack pass 32, M-2.
 */
const LONG_NAME = /access_token|refresh_token|api_key/gi;

/** Brackets (`[]`, `[0]`, each short) then `=`. */
const BRACKETS_EQ = /(?:\[[^\]]{0,32}\])*=/y;

/** Whether a long name stands anywhere but as a pair the rules redacted (`access_token=` and `OWN_MARK`). */
function longNameLeft(t: string): boolean {
  LONG_NAME.lastIndex = 0;
  for (let m = LONG_NAME.exec(t); m !== null; m = LONG_NAME.exec(t)) {
    BRACKETS_EQ.lastIndex = m.index + m[0].length;
    if (!BRACKETS_EQ.test(t)) return true; // (no `=` after it, past `[]` or `[0]`)
    REDACTED_VALUE.lastIndex = BRACKETS_EQ.lastIndex;
    if (!REDACTED_VALUE.test(t)) return true;
  }
  return false;
}
/**
 * What the rules here write in place of a value while the text is checked — a lone surrogate, which no request line holds
 * (its bytes are read one to a character, and percent-decoding never makes one) — turned into `[Redacted]` once it is: a client that wrote the mark itself
 * (`x.access_token=[Redacted]%26<token>`, the re-check of attack pass 30) is no redacted pair, and the text needs no second
 * decoding to tell (it had one, for every URL holding a `%`).
 */
const OWN_MARK = '\ud800';
/** A value the rules redacted, and what may follow it: the whole value, to `&` or a space. */
const REDACTED_VALUE = /\ud800(?:$|[&\s])/y;

/**
 * Whether a credential's name is followed by a value not redacted anywhere in a decoded text, read twice: as it is (every
 * character beyond ASCII no part of a name) and folded (NFKC: a Kelvin sign, a long s, full-width letters as the letters
 * they stand for; a zero-width or other format character dropped). A name is a whole run of ASCII letters, digits and
 * `_`; before its `=` may stand only brackets with what they hold (`[]`, `[0]`, `[&]`) and characters that are not such:
 * attack pass 30, M-2 (`[]`, `.`, `%00` after a `#` or a second `?`: 16 spellings in clear) and its re-check (full-width
 * `&`, `²`, a combining accent: folded only, they hid the name).
 */
function secretLeft(decoded: string): boolean {
  if (longNameLeft(decoded) || leftIn(decoded)) return true;
  if (!/[^\x00-\x7f]/.test(decoded)) return false;
  // (combining marks dropped before folding: NFKC orders a run of them one by one — 64 000 alternating marks took 1.9 s,
  // attack pass 32, M-1 — and no mark is part of a name)
  return leftIn(decoded.replace(/[\p{M}\p{Cf}]/gu, '').normalize('NFKC').replace(/[\u0130\u0131]/g, 'i'));
}

/**
 * `secretLeft` on one reading: one pass, the text cut into pieces at `=`, and at `&`, `#` and `?` outside brackets; each
 * piece read back from its `=` once (linear: the re-check of pass 30 found a look-back past the piece quadratic —
 * `/%41]=]=…`, 15 KB, 47–82 ms).
 */
function leftIn(t: string): boolean {
  let from = 0; // where the current piece begins
  let depth = 0; // brackets open in it
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 91) depth++; // [
    else if (c === 93) { if (depth > 0) depth--; } // ]
    else if ((c === 38 || c === 35 || c === 63) && depth === 0) from = i + 1; // & # ?
    else if (c === 61) { // =
      if (endsWithName(t, from, i)) {
        REDACTED_VALUE.lastIndex = i + 1;
        if (!REDACTED_VALUE.test(t)) return true;
      }
      from = i + 1;
      depth = 0;
    }
  }
  return false;
}

const isWord = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;

/** Whether t[from, to) is a credential's name followed by brackets (what they hold) and non-word characters only. */
function endsWithName(t: string, from: number, to: number): boolean {
  let end = to;
  let opens = true; // (a [ may still stand in the piece before end: once none does, none will — a character looked at once)
  while (end > from) {
    const c = t.charCodeAt(end - 1);
    if (c === 93) { // ] — a bracket and what it holds, looked for within the piece only
      let open = opens ? end - 2 : from - 1;
      while (open >= from && t.charCodeAt(open) !== 91) open--;
      if (open < from) opens = false;
      end = open >= from ? open : end - 1;
    } else if (!isWord(c)) end--;
    else break;
  }
  let start = end;
  while (start > from && isWord(t.charCodeAt(start - 1))) start--;
  return end - start <= NAME_MOST && SECRET_PARAMS.has(t.slice(start, end).toLowerCase());
}

/**
 * A text percent-decoded until it no longer changes (eight times at most). (A `+` is left as it is: to `secretLeft` it
 * is, as a space, no part of a name; turning 64 000 of them into spaces took 3 ms.)
 */
function decodedAll(text: string): string {
  let t = text;
  for (let i = 0; i < 8 && t.includes('%'); i++) {
    const next = percentDecoded(t) ?? t.replace(/%([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    if (next === t) break;
    t = next;
  }
  return t;
}

/** Removes secrets from free text (URLs in request logs, error messages). */
export function scrubText(s: string): string {
  // nothing that can name or hold a secret: as it is (most URLs; the rules below cost several passes)
  if (!PLAIN_SUSPECT.test(s)) return s;
  // the whole query, quotes included (a URL may carry a raw ' or " before a credential parameter), and a fragment after
  // it or in place of it (`?fields=id#&access_token=…`, `/users/me#access_token=…`: a client's request line may carry
  // one — attack passes 26 F-B, 27 N-2)
  let out = s.replace(/([?#])(\S*)/g, (_m, mark: string, q: string) => `${mark}${scrubQuery(q)}`);
  const mark = (m: string) => (m.startsWith('sk_') ? 'sk_[Redacted]' : 'Bearer [Redacted]');
  for (const re of SECRET_IN_TEXT) out = out.replace(re, mark);
  out = redactJwts(out);
  // name=value pairs in free text outside a query string (error messages)
  out = out.replace(/(^|[\s&,;{(])(access_token|refresh_token|password)=[^&\s"]*/gi, (_m, pre: string, k: string) => `${pre}${k}=${OWN_MARK}`);
  // (a credential's name with a value still left anywhere, decoded — a query a client mangled: a second `?`, a `#` inside
  // it, an encoded `&` or `?`, a quote before the name, one in the path; attack pass 28, M-2 and its re-check: 23
  // spellings logged a static token in clear — and the text is cut before its first `?`, `#`, `%`, `&`, `;` or `=`)
  if (secretLeft(decodedAll(out))) {
    const cut = out.search(/[?#%&;=]/);
    return `${cut < 0 ? '' : out.slice(0, cut).replaceAll(OWN_MARK, '[Redacted]')}[Redacted]`;
  }
  return out.replaceAll(OWN_MARK, '[Redacted]');
}

/**
 * A request's URL as a log line writes it: its first SCRUB_CHARS characters scrubbed, the rest as its length alone (every
 * rule above is linear; this bounds each line's work and size whatever shape a URL finds next — attack passes 30–32
 * found three, each a quadratic look in a text of no bound).
 */
export function scrubUrl(url: string): string {
  if (url.length <= SCRUB_CHARS) return scrubText(url);
  return `${scrubText(url.slice(0, SCRUB_CHARS))}[… ${url.length - SCRUB_CHARS} characters more]`;
}
