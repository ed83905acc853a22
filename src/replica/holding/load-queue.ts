/**
 * The teams being read from the store, a few at a time (`LoadQueue.run`), the rest waiting in order. Reading a team is
 * mostly work on the event loop (SQLite answers synchronously; every row is parsed and applied), so loads side by side
 * are no faster than one after another, and each turn of the loop would carry a slice of every one of them: ten at once
 * hold the loop ten times as long between two requests. A few at once still overlap PostgreSQL's round trips.
 */
export class LoadQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly atOnce: number) {}

  /** Runs `work` once fewer than `atOnce` loads run; loads start in the order they were asked for. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.atOnce) await new Promise<void>((r) => this.waiting.push(r));
    else this.running++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next(); // its place handed on: `running` stays
      else this.running--;
    }
  }

  /** Loads running and waiting (tests, status). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
