import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

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

  /** Every value written, in order (the file is closed for writing first). */
  async *read(): AsyncGenerator<unknown> {
    this.out.end();
    await once(this.out, 'finish');
    const lines = createInterface({ input: createReadStream(this.file), crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) if (line) yield JSON.parse(line) as unknown;
  }

  async remove(): Promise<void> {
    this.out.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }
}
