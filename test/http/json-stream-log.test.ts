import { describe, expect, it } from 'vitest';
import type { FastifyBaseLogger } from 'fastify';
import { errors } from '../../src/errors/catalog.js';
import { jsonArrayEnvelope } from '../../src/http/json-stream.js';

/** What a streamed answer cut short logs: the gateway's own refusal a warning without a stack, a fault an error with it. */
function logged(): { lines: { level: string; obj: Record<string, unknown> }[]; log: FastifyBaseLogger } {
  const lines: { level: string; obj: Record<string, unknown> }[] = [];
  const at = (level: string) => (obj: Record<string, unknown>) => { lines.push({ level, obj }); };
  const log = { warn: at('warn'), error: at('error'), info: at('info'), debug: at('debug') } as unknown as FastifyBaseLogger;
  return { lines, log };
}

async function* failing(e: Error): AsyncGenerator<unknown> {
  yield { id: 1 };
  throw e;
}

async function drain(e: Error, log: FastifyBaseLogger): Promise<unknown> {
  try {
    for await (const _ of jsonArrayEnvelope(failing(e), log)) { /* sent */ }
  } catch (thrown) {
    return thrown;
  }
  return undefined;
}

describe('a streamed answer cut short', () => {
  it('by the gateway\'s own refusal (its key\'s readers hold the room: 503) logs a warning without a stack (attack pass 22, L1)', async () => {
    const { lines, log } = logged();
    const refusal = errors.busy('Answers of this key not yet read hold the memory its answer needs; retry shortly.', 5);
    expect(await drain(refusal, log)).toBe(refusal);
    expect(lines.map((l) => l.level)).toEqual(['warn']);
    expect(lines[0]!.obj).toEqual({ code: refusal.code, status: 503, reason: refusal.message });
  });

  it('by a fault logs an error with it', async () => {
    const { lines, log } = logged();
    const fault = new Error('boom');
    expect(await drain(fault, log)).toBe(fault);
    expect(lines.map((l) => l.level)).toEqual(['error']);
    expect(lines[0]!.obj.err).toBe(fault);
  });
});
