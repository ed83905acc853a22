import type { FastifyError, FastifyInstance } from 'fastify';
import { V1Error, V1UnauthorizedError } from '../v1/errors.js';
import { GatewayError, errorEnvelope, errors, isGatewayError } from './catalog.js';
import { fromV1Error } from './v1-errors.js';

/** Maps anything thrown in a route to the Directus envelope; nothing leaves as a bare 500 stack. */
export function toGatewayError(err: unknown, path = ''): GatewayError {
  if (isGatewayError(err)) return err;
  if (err instanceof V1Error) return fromV1Error(err);
  const fe = err as Partial<FastifyError> & { statusCode?: number };
  if (fe && typeof fe === 'object' && typeof fe.code === 'string') {
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
        fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ||
        fe.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' || fe.code === 'FST_ERR_VALIDATION') {
      return errors.invalidPayload(fe.message ?? 'Invalid payload.');
    }
  }
  if (err instanceof SyntaxError) return errors.invalidPayload(err.message);
  if (fe && typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    if (fe.statusCode === 413) return errors.invalidPayload('request entity too large');
    if (fe.statusCode === 404) return errors.routeNotFound(path);
    return errors.invalidPayload(fe.message ?? 'Invalid payload.');
  }
  return errors.internal(err);
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const ge = toGatewayError(err, request.url.split('?')[0] ?? request.url);
    if (err instanceof V1UnauthorizedError) {
      const user = (request as { principal?: { user: { id: string } } | null }).principal?.user;
      request.log.warn({ userId: user?.id }, 'v1 rejected the key bound to this user; it must be rebound');
    }
    else if (err instanceof V1Error) {
      // the cause and the v1 endpoint, never the key (the path carries ids only)
      request.log.warn({ v1: { method: err.method, path: err.path, status: err.status }, cause: err.message }, 'v1 call failed');
    }
    if (ge.status >= 500 && ge.code !== 'SERVICE_UNAVAILABLE') {
      request.log.error({ err }, 'unexpected error');
    }
    for (const [k, v] of Object.entries(ge.headers)) void reply.header(k, v);
    // an answer that had begun as a file (`?export=csv`: its type and name set before its first row was read) is an
    // error envelope now (attack pass 19, F5: Fastify's own 500, a JSON object under text/csv)
    void reply.removeHeader('content-disposition').type('application/json; charset=utf-8');
    const body = errorEnvelope(ge);
    // 5xx bodies carry the request id, so a report can be matched with the log lines
    if (ge.status >= 500) for (const e of body.errors) e.extensions.request_id = request.id;
    return reply.status(ge.status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    const ge = errors.routeNotFound(path);
    return reply.status(ge.status).send(errorEnvelope(ge));
  });
}
