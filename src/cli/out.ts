/** One line of the command's output on stdout. */
export const out = (s: string): void => { process.stdout.write(`${s}\n`); };
