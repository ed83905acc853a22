import { hash } from 'node:crypto';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: unknown): s is string => typeof s === 'string' && UUID_RE.test(s);

const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/** Namespace uuid → its 16 bytes (there are a handful; every render id is hashed under one of them). */
const namespaceBytes = new Map<string, Buffer>();

/** RFC 9562 name-based UUID (version 5, SHA-1), with the one-shot hash (no Hash object per id). */
export function uuidV5(name: string, namespace: string): string {
  let ns = namespaceBytes.get(namespace);
  if (!ns) {
    ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
    namespaceBytes.set(namespace, ns);
  }
  const input = Buffer.allocUnsafe(16 + Buffer.byteLength(name, 'utf8'));
  ns.copy(input, 0);
  input.write(name, 16, 'utf8');
  const d = hash('sha1', input, 'buffer');
  // version 5 in the 13th hex digit; the variant's two high bits set to 10 in the 17th
  d[6] = ((d[6] as number) & 0x0f) | 0x50;
  d[8] = ((d[8] as number) & 0x3f) | 0x80;
  // written into one buffer: a flat string (a template of slices would be a tree of ~10 heap objects, held by every index row)
  const out = Buffer.allocUnsafe(36);
  let at = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) out[at++] = 45; // '-'
    const b = d[i] as number;
    out[at++] = HEX_DIGITS[b >> 4] as number;
    out[at++] = HEX_DIGITS[b & 15] as number;
  }
  return out.toString('latin1');
}
