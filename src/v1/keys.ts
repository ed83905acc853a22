import { LRUCache } from 'lru-cache';
import type { ChangeBus } from '../store/changes.js';
import { partitionOf, type V1Client, type V1Meter, type V1Session } from './client.js';

/** Where a user's bound key is read from (decrypted by the user store). */
export interface KeySource { v1Key(userId: string): Promise<string | undefined> }

/**
 * The v1 keys bound to legacy users, held in memory for a minute after use (decrypting one costs a store read): the
 * v1 API as a user's key sees it, and the cache partition of a held key. A rebind (on any instance, or by the CLI)
 * drops the held key, through the change bus.
 */
export class KeyRing {
  private readonly keys = new LRUCache<string, string>({ max: 10_000, ttl: 60_000 });

  constructor(private readonly users: KeySource, private readonly v1: V1Client, bus: ChangeBus) {
    bus.on('users', (id) => {
      if (id === '*') this.keys.clear();
      else this.keys.delete(id);
    });
    bus.onResync(() => this.keys.clear());
  }

  /** The v1 API as this legacy user's bound key sees it. */
  async v1For(userId: string, meter?: V1Meter, requestId?: string): Promise<V1Session> {
    let key = this.keys.get(userId);
    if (!key) {
      key = await this.users.v1Key(userId);
      if (!key) throw new TypeError(`user ${userId} has no bound key`);
      this.keys.set(userId, key);
    }
    return this.v1.as(key, meter, requestId);
  }

  /** The cache partition of the user's key when the key is held in memory (undefined otherwise). */
  partitionHeld(userId: string): string | undefined {
    const key = this.keys.get(userId);
    return key ? partitionOf(key) : undefined;
  }

  /** Forget a held key (after a rebind). */
  forget(userId: string): void {
    this.keys.delete(userId);
  }
}
