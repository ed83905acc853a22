/** The reason an answer's signal gives (one made once: an abort with none builds a DOMException, its stack, every answer). */
const CLOSED = new DOMException('The answer has ended (sent, or the client has gone).', 'AbortError');

/** The end of the answer a read is for: `onEnd` runs once it has closed (sent, or its client gone); `gone` aborts then. */
export interface AnswerEnd { onEnd(fn: () => void): void; readonly gone: AbortSignal }

/**
 * The end of the answer written to `res` (a reply's raw response): its closing — sent, or its client gone. Waits for room
 * end with it, and whatever room the answer still holds is given back then (src/read/data-room.ts `forAnswer`).
 */
export function answerEnd(res: { once(event: 'close', listener: () => void): unknown }): AnswerEnd {
  const gone = new AbortController();
  res.once('close', () => gone.abort(CLOSED));
  return { gone: gone.signal, onEnd: (fn) => { if (gone.signal.aborted) fn(); else gone.signal.addEventListener('abort', fn, { once: true }); } };
}
