import type { FastifyBaseLogger } from 'fastify';
import { RawJson } from '../exec/raw-json.js';
import { GatewayError } from '../errors/catalog.js';
import { pacer } from '../lib/pace.js';

/**
 * `{"meta":…,"data":[…]}` written item by item. The first item is awaited before the status is sent, so most
 * failures still answer with an error envelope; a failure after that ends the body early (logged).
 */
export async function* jsonArrayEnvelope(
  items: AsyncIterable<unknown>,
  log: FastifyBaseLogger,
  meta?: Record<string, number>,
  explainAtEnd?: () => Record<string, unknown>,
  itemBytes: (bytes: number) => number = (n) => n,
): AsyncGenerator<Uint8Array> {
  const pace = pacer(); // (a short answer goes straight on)
  let first = true;
  let parts: Uint8Array[] = [Buffer.from(meta ? `{"meta":${JSON.stringify(meta)},"data":[` : '{"data":[')];
  let size = 0;
  const comma = Buffer.from(',');
  let last = 0;
  try {
    for await (const item of items) {
      // a long answer shares the event loop with other requests a slice at a time
      const turn = pace(last);
      if (turn) await turn;
      if (!first) parts.push(comma);
      const b = (item instanceof RawJson ? item : RawJson.of(item)).json;
      itemBytes(b.length);
      last = b.length;
      first = false;
      if (b.length > 65_536) {
        // a large item is handed on as it is (never copied into a larger chunk)
        yield Buffer.concat(parts);
        parts = [];
        size = 0;
        yield b;
        continue;
      }
      parts.push(b);
      size += b.length;
      if (size > 65_536) {
        yield Buffer.concat(parts);
        parts = [];
        size = 0;
      }
    }
  } catch (e) {
    // (the gateway's own refusal — a reader gone, a bound passed, the room its answer waited for held by its key's readers —
    // is the client's doing, not a fault: a line without a stack; 480 such errors in one attack's log, attack pass 22, L1)
    if (e instanceof GatewayError && (e.status < 500 || e.extensions.service === 'gateway')) {
      log.warn({ code: e.code, status: e.status, reason: e.message }, 'the answer was refused while streaming; the body is cut short');
    } else {
      log.error({ err: e }, 'the answer failed while streaming; the body is cut short');
    }
    throw e;
  }
  // explain counts are only known once everything is read: they follow the data
  parts.push(Buffer.from(explainAtEnd ? `],"explain":${JSON.stringify(explainAtEnd())}}` : ']}'));
  yield Buffer.concat(parts);
}
