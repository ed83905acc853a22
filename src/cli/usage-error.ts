/** A mistake in how the command was called (exit 2), as opposed to a failure while running it (exit 1). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
