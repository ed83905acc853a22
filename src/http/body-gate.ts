/**
 * The request bodies one principal has in flight, bounded in bytes: past PRINCIPAL_BODY_BYTES at once, the next request
 * with a body is answered 429 before its body is read. A body held while its request waits costs several times its size
 * (the bytes, the parsed question, its lowered text): one user's 1 000 parallel 900 KB SEARCH bodies took an instance with
 * a 1 GB heap to its end in 22 s, 5.5 GB without one (attack pass 19, F2). Requests without a body pass. The bytes are
 * given back once the request has ended — its question run and its reply closed (src/http/request-end.ts) — not when its
 * client hangs up (attack pass 20, N2).
 */
export const PRINCIPAL_BODY_BYTES = 32 * 1_048_576;

export class BodyGate {
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly most = PRINCIPAL_BODY_BYTES) {}

  /** Takes `bytes` for `key`: the function that gives them back (once), or undefined when they do not fit (one body always does). */
  enter(key: string, bytes: number): (() => void) | undefined {
    const held = this.inFlight.get(key) ?? 0;
    if (held > 0 && held + bytes > this.most) return undefined;
    this.inFlight.set(key, held + bytes);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.inFlight.get(key) ?? bytes) - bytes;
      if (left <= 0) this.inFlight.delete(key);
      else this.inFlight.set(key, left);
    };
  }
}
