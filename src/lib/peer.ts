import { isIP } from 'node:net';

/**
 * The key a client address is counted under by the per-address bounds (connections, pipelined requests, anonymous
 * requests, login attempts): an IPv4 address as itself (also when seen through an IPv6 socket, `::ffff:10.0.0.1`), an
 * IPv6 address by its /64 — the block one subscriber, one host even, is given: counted per address, one machine
 * rotating through its 2^64 addresses had a fresh budget for every request (as rate limiters such as nginx's or a CDN's
 * group IPv6 clients). Anything else (a unix socket, an empty address) as given.
 */
export function peerKey(address: string | undefined): string {
  if (!address) return '';
  if (isIP(address) !== 6) return address;
  const groups = v6Groups(address);
  // (an IPv4-mapped address however written — `::ffff:7f00:1` is 127.0.0.1 —: the IPv4 client it is; attack pass 26, F-C)
  if (groups.slice(0, 5).every((g) => g === '0') && groups[5] === 'ffff') {
    const [hi = 0, lo = 0] = groups.slice(6).map((g) => parseInt(g, 16));
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, in lower-case hex without leading zeros (`::` expanded, a zone dropped). */
function v6Groups(address: string): string[] {
  const bare = address.split('%')[0]!.toLowerCase();
  const [head = '', tail] = bare.split('::');
  const part = (s: string) => (s === '' ? [] : s.split(':')).flatMap(groupsOf);
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => parseInt(g, 16).toString(16));
}

/** A group, or an embedded IPv4 address's two (`::1.2.3.4`). */
function groupsOf(s: string): string[] {
  if (!s.includes('.')) return [s];
  const [a = 0, b = 0, c = 0, d = 0] = s.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}
