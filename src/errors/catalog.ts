/**
 * The one error catalogue. Every failure a legacy client can see is a GatewayError with a stable
 * Directus code and status; the error handler renders it as `{errors:[{message, extensions:{code}}]}`.
 */
export const ERROR_STATUS = {
  INVALID_CREDENTIALS: 401,
  TOKEN_EXPIRED: 401,
  INVALID_TOKEN: 403,
  FORBIDDEN: 403,
  INVALID_QUERY: 400,
  INVALID_PAYLOAD: 400,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYMENT_REQUIRED: 402,
  RECORD_NOT_UNIQUE: 400,
  REQUESTS_EXCEEDED: 429,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL_SERVER_ERROR: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface GatewayErrorOptions {
  /** Extra `extensions` fields besides `code` (e.g. `path`, `details`). */
  readonly extensions?: Readonly<Record<string, unknown>>;
  /** Extra response headers (e.g. Retry-After). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
  /** Several messages rendered as several entries of `errors` (same code and status). */
  readonly messages?: readonly string[];
  /** Per-entry extensions, parallel to `messages`. */
  readonly entryExtensions?: readonly Readonly<Record<string, unknown>>[];
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extensions: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly messages: readonly string[];
  readonly entryExtensions: readonly Readonly<Record<string, unknown>>[] | undefined;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
    this.messages = options.messages && options.messages.length > 0 ? options.messages : [message];
    this.entryExtensions = options.entryExtensions;
  }
}

export function isGatewayError(e: unknown): e is GatewayError {
  return e instanceof GatewayError;
}

/** Constructors for the errors used in many places, with Directus's exact wording. */
export const errors = {
  invalidCredentials: (message = 'Invalid user credentials.') => new GatewayError('INVALID_CREDENTIALS', message),
  tokenExpired: () => new GatewayError('TOKEN_EXPIRED', 'Token expired.'),
  invalidToken: (message = 'Invalid token.') => new GatewayError('INVALID_TOKEN', message),
  forbidden: (message = "You don't have permission to access this.") => new GatewayError('FORBIDDEN', message),
  invalidQuery: (reasons: readonly string[]) =>
    new GatewayError('INVALID_QUERY', reasons[0] ?? 'Invalid query.', {
      messages: reasons,
      extensions: { reason: reasons[0] },
    }),
  /** Directus ≥ 10.4 wording: `Invalid payload. <reason>.`, the bare reason in extensions. */
  invalidPayload: (reason: string, extensions: Record<string, unknown> = {}) => {
    const bare = reason.replace(/^Invalid payload\.\s*/, '').replace(/\.$/, '') || 'The body is not valid';
    return new GatewayError('INVALID_PAYLOAD', `Invalid payload. ${bare}.`, { extensions: { reason: bare, ...extensions } });
  },
  routeNotFound: (path: string) =>
    new GatewayError('ROUTE_NOT_FOUND', `Route ${path} doesn't exist.`, { extensions: { path } }),
  serviceUnavailable: (reason: string, service = 'v1') =>
    new GatewayError('SERVICE_UNAVAILABLE', `Service "${service}" is unavailable. ${reason}`, {
      extensions: { service, reason },
    }),
  requestsExceeded: (retryAfterSeconds: number) =>
    new GatewayError('REQUESTS_EXCEEDED', `Too many requests, retry after ${retryAfterSeconds}s.`, {
      headers: { 'retry-after': String(retryAfterSeconds) },
      extensions: { reset: new Date(Date.now() + retryAfterSeconds * 1000).toISOString() },
    }),
};

/** The Directus error envelope for a GatewayError. */
export function errorEnvelope(e: GatewayError): { errors: { message: string; extensions: Record<string, unknown> }[] } {
  return {
    errors: e.messages.map((message, i) => ({ message, extensions: { code: e.code, ...(e.entryExtensions?.[i] ?? e.extensions) } })),
  };
}
