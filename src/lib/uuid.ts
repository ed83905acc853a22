import { hash } from 'node:crypto';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: unknown): s is string => typeof s === 'string' && UUID_RE.test(s);

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
  const x = hash('sha1', input, 'hex');
  // version 5 in the 13th hex digit; the variant's two high bits set to 10 in the 17th
  const variant = ((parseInt(x[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-5${x.slice(13, 16)}-${variant}${x.slice(17, 20)}-${x.slice(20, 32)}`;
}
