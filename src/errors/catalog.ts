import { boundedText } from '../lib/bounded-text.js';

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
  PAYMENT_REQUIRED: 402,
  RECORD_NOT_UNIQUE: 400,
  INVALID_FOREIGN_KEY: 400,
  REQUESTS_EXCEEDED: 429,
  /** Gateway-only: a deprecated call refused in a brownout or after its sunset (src/deprecate/). */
  DEPRECATED: 410,
  /** Gateway-only: Node's own answer to oversized headers, put in the envelope (Directus answers it as plain text). */
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
  /** Gateway-only: Node's own answer to a request not sent in time (HTTP_REQUEST_TIMEOUT_MS), put in the envelope. */
  REQUEST_TIMEOUT: 408,
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
  /**
   * Extension fields the gateway keeps for itself (its tests, logs, the migration report) but does not send: an answer
   * carries the fields Directus sends, no more (an operator comparing error answers sees no noise of ours).
   */
  readonly unsent?: readonly string[];
}

/** The most characters of one error message (a longer one is cut in the middle, the cut said). */
export const MESSAGE_MAX = 2000;

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extensions: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly messages: readonly string[];
  readonly entryExtensions: readonly Readonly<Record<string, unknown>>[] | undefined;
  readonly unsent: readonly string[];

  constructor(code: ErrorCode, text: string, options: GatewayErrorOptions = {}) {
    // (whatever a message repeats from the request, an error's text is bounded: MESSAGE_MAX characters a message)
    const message = boundedText(text, MESSAGE_MAX);
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
    this.messages = options.messages && options.messages.length > 0 ? options.messages.map((m) => boundedText(m, MESSAGE_MAX)) : [message];
    this.entryExtensions = options.entryExtensions;
    this.unsent = options.unsent ?? [];
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
  /**
   * The one INVALID_QUERY builder: every problem its own entry, `Invalid query. <reason>.` (Directus ≥ 10.4), the bare
   * reason in extensions (and the parameter path, kept by the gateway, never sent: Directus sends none). A plain string is
   * one problem without a path.
   */
  invalidQuery: (problems: readonly (string | { readonly path: string; readonly reason: string })[]) => {
    const list = problems.map((p) => (typeof p === 'string' ? { reason: p.replace(/^Invalid query\.\s*/, '') } : p));
    const messages = list.map((p) => `Invalid query. ${p.reason}${/[.!]$/.test(p.reason) ? '' : '.'}`);
    const ext = (p: { reason: string; path?: string }) => (p.path === undefined ? { reason: p.reason } : { reason: p.reason, path: p.path });
    return new GatewayError('INVALID_QUERY', messages[0] ?? 'Invalid query.', {
      messages, extensions: list[0] ? ext(list[0]) : {}, entryExtensions: list.map(ext), unsent: ['path'],
    });
  },
  /** v1 could not confirm a write and the gateway cannot tell whether it happened (or can tell it did not). */
  outcomeUnknown: (message: string, extensions: Record<string, unknown>) =>
    new GatewayError('SERVICE_UNAVAILABLE', `Service "v1" is unavailable. ${message}`, { extensions: { service: 'v1', ...extensions } }),
  paymentRequired: (message: string) => new GatewayError('PAYMENT_REQUIRED', message),
  recordNotUnique: (collection: string, field: string) =>
    new GatewayError('RECORD_NOT_UNIQUE', `Field "${field}" has to be unique.`, { extensions: { collection, field } }),
  /** A write naming a related item that does not exist (or that the caller cannot reach: nothing tells the two apart). */
  invalidForeignKey: (collection: string, field: string) =>
    new GatewayError('INVALID_FOREIGN_KEY', `Invalid foreign key for field "${field}" in collection "${collection}".`, { extensions: { collection, field } }),
  /** A field that cannot be written (a write policy other than overlay). */
  readOnlyField: (field: string, collection: string) =>
    new GatewayError('FORBIDDEN', `The field "${field}" of ${collection} became read-only with the v1 API and cannot be changed.`, { extensions: { field } }),
  /** A deprecated call refused (a brownout, or past its sunset): the rule's message, extensions and headers. */
  deprecated: (message: string, extensions: Record<string, unknown>, headers: Record<string, string>) =>
    new GatewayError('DEPRECATED', message, { extensions, headers }),
  headersTooLarge: () => new GatewayError('REQUEST_HEADER_FIELDS_TOO_LARGE', 'The request line and headers are too large.'),
  /** A request not sent whole within HTTP_REQUEST_TIMEOUT_MS (Node's 408; Directus names no code for it). */
  requestTimeout: () => new GatewayError('REQUEST_TIMEOUT', 'The request was not sent in time.'),
  internal: (cause: unknown) => new GatewayError('INTERNAL_SERVER_ERROR', 'An unexpected error occurred.', { cause }),
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
  /** The gateway's own bounds are full for now (answers in flight, heavy reads): a 503 with when to try again. */
  busy: (reason: string, retryAfterSeconds: number) =>
    new GatewayError('SERVICE_UNAVAILABLE', `Service "gateway" is unavailable. ${reason}`, {
      extensions: { service: 'gateway', reason },
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),
  requestsExceeded: (retryAfterSeconds: number, now = Date.now()) =>
    new GatewayError('REQUESTS_EXCEEDED', `Too many requests, retry after ${retryAfterSeconds}s.`, {
      headers: { 'retry-after': String(retryAfterSeconds) },
      extensions: { reset: new Date(now + retryAfterSeconds * 1000).toISOString() },
    }),
};

/** The extension fields an answer carries: the gateway's own (`unsent`) left out. */
function sent(extensions: Readonly<Record<string, unknown>>, unsent: readonly string[]): Readonly<Record<string, unknown>> {
  if (unsent.length === 0) return extensions;
  return Object.fromEntries(Object.entries(extensions).filter(([k]) => !unsent.includes(k)));
}

/** The Directus error envelope for a GatewayError. */
export function errorEnvelope(e: GatewayError): { errors: { message: string; extensions: Record<string, unknown> }[] } {
  return {
    errors: e.messages.map((message, i) => ({ message, extensions: { code: e.code, ...sent(e.entryExtensions?.[i] ?? e.extensions, e.unsent) } })),
  };
}
