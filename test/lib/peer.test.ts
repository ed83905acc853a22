import { describe, expect, it } from 'vitest';
import { peerKey } from '../../src/lib/peer.js';

describe('peerKey (the key of the per-address bounds)', () => {
  it('keeps an IPv4 address, also seen through an IPv6 socket', () => {
    expect(peerKey('203.0.113.7')).toBe('203.0.113.7');
    expect(peerKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    // (written in hex, as a proxy may write it: not the /64 of ::1 — attack pass 26, F-C)
    expect(peerKey('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(peerKey('0:0:0:0:0:FFFF:CB00:7107')).toBe('203.0.113.7');
  });

  it('groups IPv6 addresses by their /64, however they are written', () => {
    const same = ['2001:db8:1:2::1', '2001:0DB8:0001:0002:ffff:1:2:3', '2001:db8:1:2:0:0:0:9', '2001:db8:1:2::', '2001:db8:1:2::1%eth0'];
    expect(new Set(same.map(peerKey))).toEqual(new Set(['2001:db8:1:2::/64']));
    expect(peerKey('2001:db8:1:3::1')).not.toBe(peerKey('2001:db8:1:2::1'));
    expect(peerKey('::1')).toBe('0:0:0:0::/64');
    expect(peerKey('fe80::1')).toBe('fe80:0:0:0::/64');
    expect(peerKey('1::')).toBe('1:0:0:0::/64');
    expect(peerKey('::1.2.3.4')).toBe('0:0:0:0::/64');
  });

  it('leaves anything else as it is', () => {
    expect(peerKey(undefined)).toBe('');
    expect(peerKey('')).toBe('');
    expect(peerKey('/tmp/gateway.sock')).toBe('/tmp/gateway.sock');
    expect(peerKey('::ffff:1.2.3.4x')).toBe('::ffff:1.2.3.4x');
  });
});
