import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { deferQuery, deferred, parseQueries } from '../../src/http/deferred-query.js';

/**
 * The query string is parsed in a hook once a request's turn has come, never by a router before any bound (attack pass
 * 26, F-A) — including Fastify's own router for paths no route matches, which parsed it at once with its default parser
 * (the review of the fix: `/nope?…` held its parsed query while waiting, and read a fragment as the query).
 */
describe('the query string, parsed once the request\'s turn has come', () => {
  it('is left unparsed by both routers (a matched path and one no route matches), then parsed from the URL', async () => {
    const app = Fastify({ routerOptions: { querystringParser: deferQuery } });
    const before: Record<string, boolean> = {};
    app.addHook('onRequest', (request, _reply, done) => { before[request.url] = deferred(request.query); done(); });
    parseQueries(app);
    app.get('/a', async (request) => ({ query: request.query }));
    app.setNotFoundHandler(async (request, reply) => reply.status(404).send({ query: request.query }));
    const ask = async (url: string) => JSON.parse((await app.inject({ method: 'GET', url })).body).query;
    expect(await ask('/a?x[y]=1&x[z]=2')).toEqual({ x: { y: '1', z: '2' } });
    expect(await ask('/nothing?x[y]=1&x[z]=2')).toEqual({ x: { y: '1', z: '2' } });
    expect(before).toEqual({ '/a?x[y]=1&x[z]=2': true, '/nothing?x[y]=1&x[z]=2': true });
    // a fragment is no part of the query, on either router
    expect(await ask('/a#access_token=t')).toEqual({});
    expect(await ask('/nothing#access_token=t')).toEqual({});
    expect(await ask('/nothing?a=1#&access_token=t')).toEqual({ a: '1' });
    await app.close();
  });
});
