import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NEWLINE = 0x0a;

/**
 * A scratch file of JSON lines, for an answer that must be read twice without being held in memory (a CSV export:
 * its header names every column, known only after the last item). Written once, read once, removed after.
 */
export class Spool {
  private failed: Error | undefined;

  private constructor(private readonly dir: string, private readonly file: string, private readonly out: ReturnType<typeof createWriteStream>) {
    // an error of the scratch file (a write still pending when an abandoned export removes it) is this spool's, never
    // the process's: an 'error' event with no listener would end the gateway
    out.on('error', (e) => { this.failed ??= e; });
  }

  static async open(): Promise<Spool> {
    const dir = await mkdtemp(join(tmpdir(), 'gateway-spool-'));
    const file = join(dir, 'rows.jsonl');
    return new Spool(dir, file, createWriteStream(file, { mode: 0o600 }));
  }

  async write(value: unknown): Promise<void> {
    if (this.failed) throw this.failed;
    if (!this.out.write(`${JSON.stringify(value)}\n`)) await once(this.out, 'drain');
  }

  /**
   * Every value written, in order (the file is closed for writing first). The file is read a chunk (64 KB) at a time as
   * values are asked for: what is held is one value and a chunk, whatever the lines' length (readline's iterator read
   * ahead up to 1 024 lines — a whole export of multi-MB rows, pinned by a reader that stopped: attack pass 10).
   */
  async *read(): AsyncGenerator<unknown> {
    this.out.end();
    await once(this.out, 'finish');
    let parts: Buffer[] = [];
    const value = (line: Buffer): unknown => JSON.parse(line.toString('utf8')) as unknown;
    for await (const chunk of createReadStream(this.file) as AsyncIterable<Buffer>) {
      let start = 0;
      // (a JSON text has no raw newline, and no byte of a multi-byte UTF-8 character is one)
      for (let nl = chunk.indexOf(NEWLINE, start); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
        parts.push(chunk.subarray(start, nl));
        const line = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
        parts = [];
        start = nl + 1;
        if (line.length > 0) yield value(line);
      }
      if (start < chunk.length) parts.push(chunk.subarray(start));
    }
    if (parts.length > 0) yield value(Buffer.concat(parts));
  }

  async remove(): Promise<void> {
    this.out.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }
}
