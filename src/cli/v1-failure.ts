import { V1Error, V1ForbiddenError, V1NetworkError, V1UnauthorizedError } from '../v1/errors.js';

/** Why v1 did not answer as asked, in words that match the cause. */
export interface V1Failure {
  /** `unreachable`: no answer (network); `refused`: a 401/403 of the key; `answered`: another status; `other`: not v1's. */
  readonly kind: 'unreachable' | 'refused' | 'answered' | 'other';
  /** `unreachable (ECONNREFUSED)`, `refused the key (401)`, `answered 503`, or the error's own message. */
  readonly words: string;
}

/**
 * A failure of a v1 call, typed or as a message carried up by the sync (`team_…: v1 GET /v1/… failed: ECONNREFUSED`,
 * `… answered 401: …`). "Refused" is said only of a 401 or 403, never of a network error.
 */
export function v1Failure(e: unknown): V1Failure {
  if (e instanceof V1NetworkError) {
    const code = (e.cause as { code?: unknown } | undefined)?.code;
    return { kind: 'unreachable', words: `unreachable (${e.timedOut ? 'timed out' : typeof code === 'string' ? code : 'no answer'})` };
  }
  if (e instanceof V1UnauthorizedError || e instanceof V1ForbiddenError) return { kind: 'refused', words: `refused the key (${e.status})` };
  if (e instanceof V1Error && e.status !== null) return { kind: 'answered', words: `answered ${e.status}` };
  const message = e instanceof Error ? e.message : String(e);
  const network = /\bfailed: (timed out|[A-Z][A-Z0-9_]+)\b/.exec(message);
  if (network) return { kind: 'unreachable', words: `unreachable (${network[1]})` };
  const status = /\banswered (\d{3})\b/.exec(message);
  if (status) return status[1] === '401' || status[1] === '403'
    ? { kind: 'refused', words: `refused the key (${status[1]})` }
    : { kind: 'answered', words: `answered ${status[1]}` };
  return { kind: 'other', words: message.replace(/^team_\w+: /, '') };
}
