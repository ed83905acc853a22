import { peerKey } from '../lib/peer.js';

/**
 * Requests without a principal (a login, a refresh, a legacy route without a token), counted in flight per client
 * address (an IPv6 one by its /64, lib/peer.ts): past ANONYMOUS_IN_FLIGHT at once from one address, the next is
 * answered 429 at once, once its body (a few KB at most) is read — a body still trickling in holds no place (attack
 * pass 20, N3/N4).
 * One client holding thousands of connections to /auth/login — each answer held through the login stall with its body
 * — took an instance to 3.8 GB and other users' reads to 16–87 s (attack pass 18, N1). A flood of mere volume belongs to
 * the edge (a reverse proxy's rate limits); this bounds what one address holds inside the instance. Behind a proxy the
 * address is the client's when TRUST_PROXY says which hops to trust (docs/configuration.md).
 */
export const ANONYMOUS_IN_FLIGHT = 64;

export class AnonymousGate {
  /** Requests in flight per address (an address leaves once its last request ends: as many entries as connections, at most). */
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly most = ANONYMOUS_IN_FLIGHT) {}

  /** Takes a place for `address`: the function that gives it back (once), or undefined when the address has none left. */
  enter(client: string): (() => void) | undefined {
    const address = peerKey(client);
    const n = this.inFlight.get(address) ?? 0;
    if (n >= this.most) return undefined;
    this.inFlight.set(address, n + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.inFlight.get(address) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(address);
      else this.inFlight.set(address, left);
    };
  }

}
