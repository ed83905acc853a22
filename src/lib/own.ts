/**
 * A table's own entry for a name that came from a client (a field, a filter path, a body key): never one the table
 * inherits (`constructor`, `__proto__`, `toString` …). Pure.
 */
export function own<T>(table: Readonly<Record<string, T>> | undefined | null, name: string | undefined): T | undefined {
  return table && name !== undefined && Object.hasOwn(table, name) ? table[name] : undefined;
}

/** An object with no prototype, to fill with names from a client. */
export const bare = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;
