import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a cursor remembers: the endpoint and filters that made it, and where the next page starts. */
export interface CursorState {
  readonly endpoint: string;
  readonly filters: string;
  readonly after: readonly (number | string)[];
  readonly page: number;
}

export class CursorError extends Error {}

/** Opaque, tamper-evident cursors: base64url JSON plus an HMAC. */
export class CursorCodec {
  constructor(private readonly secret: string) {}

  encode(state: CursorState): string {
    const body = Buffer.from(JSON.stringify([state.endpoint, state.filters, state.after, state.page])).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  decode(cursor: string, endpoint: string, filters: string): CursorState {
    const [body, sig] = cursor.split('.');
    if (!body || !sig) throw new CursorError('Invalid cursor: not a cursor this API issued.');
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(sig);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      throw new CursorError('Invalid cursor: not a cursor this API issued.');
    }
    const [e, f, after, page] = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as [string, string, (number | string)[], number];
    if (e !== endpoint) throw new CursorError(`Invalid cursor: it was issued for a different endpoint (${e}).`);
    if (f !== filters) throw new CursorError('Invalid cursor: the filters changed since it was issued; restart from the first page.');
    return { endpoint: e, filters: f, after, page };
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url').slice(0, 22);
  }
}
