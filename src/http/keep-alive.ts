/** How long a streamed JSON answer may go without a byte before it sends a space (under HTTP_IDLE_TIMEOUT_MS's 300 s). */
export const KEEP_ALIVE_MS = 10_000;

/**
 * The parts of a JSON text, with a space sent whenever `everyMs` pass without one (whitespace between JSON tokens: the
 * text parses the same). A migration report proving one client's 200 shapes wrote nothing for minutes, and the idle
 * socket was closed mid-answer: a 200 with a cut body (attack pass 17, F2). The parts must end between tokens.
 */
export async function* keptAlive(parts: AsyncIterator<string>, everyMs = KEEP_ALIVE_MS): AsyncGenerator<string> {
  let next = parts.next();
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const tick = new Promise<'tick'>((resolve) => { timer = setTimeout(() => resolve('tick'), everyMs); });
    const got = await Promise.race([next, tick]).finally(() => clearTimeout(timer));
    if (got === 'tick') {
      yield ' ';
      continue;
    }
    if (got.done) return;
    yield got.value;
    next = parts.next();
  }
}
