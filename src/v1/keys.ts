import { LRUCache } from 'lru-cache';
import { partitionOf, type V1Client, type V1Meter, type V1Session } from './client.js';

/** Where a user's bound key is read from (decrypted by the user store). */
export interface KeySource { v1Key(userId: string): Promise<string | undefined> }

/**
 * When held keys must be dropped: a user's binding changed (`'*'`: any user's), or anything may have (a lost change
 * feed, another process's write). Built in deps.ts over the store's change bus: this folder imports no store.
 */
export interface KeyChanges {
  onUserChanged(fn: (userId: string) => void): void;
  onAnythingChanged(fn: () => void): void;
}

/**
 * The v1 keys bound to legacy users, held in memory for a minute after use (decrypting one costs a store read): the
 * v1 API as a user's key sees it, and the cache partition of a held key. A rebind (on any instance, or by the CLI)
 * drops the held key, through the change bus (`KeyChanges`).
 */
export class KeyRing {
  private readonly keys = new LRUCache<string, string>({ max: 10_000, ttl: 60_000 });

  constructor(private readonly users: KeySource, private readonly v1: V1Client, changes: KeyChanges) {
    changes.onUserChanged((id) => {
      if (id === '*') this.keys.clear();
      else this.keys.delete(id);
    });
    changes.onAnythingChanged(() => this.keys.clear());
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
