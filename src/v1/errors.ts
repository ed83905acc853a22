import type { V1ValidationDetail } from './schemas.js';

/** Typed failures of a v1 call, one class per v1 status family. Messages never contain the API key. */
export class V1Error extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly method: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}
export class V1BadRequestError extends V1Error {}
export class V1UnauthorizedError extends V1Error {}
export class V1PaymentRequiredError extends V1Error {}
export class V1ForbiddenError extends V1Error {}
export class V1NotFoundError extends V1Error {}
export class V1ValidationError extends V1Error {
  constructor(
    message: string,
    method: string,
    path: string,
    readonly summary: string,
    readonly details: readonly V1ValidationDetail[],
  ) {
    super(message, 422, method, path);
  }
}
export class V1RateLimitedError extends V1Error {
  constructor(
    message: string,
    method: string,
    path: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message, 429, method, path);
  }
}
export class V1ServerError extends V1Error {}
/** The connection failed, was reset or timed out. For a POST the request may have been carried out. */
export class V1NetworkError extends V1Error {
  constructor(
    message: string,
    method: string,
    path: string,
    readonly timedOut: boolean,
    cause: unknown,
  ) {
    super(message, null, method, path, { cause });
  }
}
/** v1 answered something that does not match its contract (unknown enum value, missing field…). */
export class V1ContractError extends V1Error {}

export function errorForStatus(status: number, method: string, path: string, body: unknown, retryAfter: string | undefined): V1Error {
  const b = (body && typeof body === 'object' ? body : {}) as { error?: unknown; message?: unknown; details?: unknown };
  const msg = `v1 ${method} ${path} answered ${status}: ${typeof b.error === 'string' ? b.error : 'no message'}`;
  switch (status) {
    case 400:
      if (Array.isArray(b.details))
        return new V1ValidationError(msg, method, path, String(b.message ?? b.error ?? ''), b.details as V1ValidationDetail[]);
      return new V1BadRequestError(msg, status, method, path);
    case 401:
      return new V1UnauthorizedError(msg, status, method, path);
    case 402:
      return new V1PaymentRequiredError(msg, status, method, path);
    case 403:
      return new V1ForbiddenError(msg, status, method, path);
    case 404:
      return new V1NotFoundError(msg, status, method, path);
    case 422:
      return new V1ValidationError(
        msg,
        method,
        path,
        String(b.message ?? b.error ?? ''),
        Array.isArray(b.details) ? (b.details as V1ValidationDetail[]) : [],
      );
    case 429:
      return new V1RateLimitedError(msg, method, path, parseRetryAfter(retryAfter));
    default:
      return status >= 500 ? new V1ServerError(msg, status, method, path) : new V1BadRequestError(msg, status, method, path);
  }
}

/** Retry-After as seconds or an HTTP date → milliseconds. */
export function parseRetryAfter(v: string | undefined, now = Date.now()): number | undefined {
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.round(Number(v) * 1000);
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}
