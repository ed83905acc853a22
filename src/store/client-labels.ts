import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** The longest label, in characters (the column is varchar(200)). */
export const LABEL_MAX = 200;

/** A client id or a principal a label can be set on: `user:<id>` or `static:<id>`, optionally `~<family>`. */
const CLIENT_ID = /^(user|static):[0-9A-Za-z_-]{1,64}(~[a-z0-9._-]{1,40})?$/;

/** Why a label or a client id cannot be stored, or undefined when both can. */
export function labelProblem(client: string, label: string | null): string | undefined {
  if (!CLIENT_ID.test(client)) return `"${client.slice(0, 80)}" is not a client id (user:<id> or static:<token id>, optionally ~<family>)`;
  if (label === null) return undefined;
  if (label.trim() === '') return 'a label cannot be empty (--clear takes a label away)';
  if ([...label].length > LABEL_MAX) return `a label is at most ${LABEL_MAX} characters`;
  if (/[\u0000-\u001f\u007f\u2028\u2029]/.test(label)) return 'a label is one line of text, without control characters';
  return undefined;
}

/**
 * The operator's labels for the migration report's clients: on a whole client id (`user:…~curl`) or on a principal
 * (`user:…`, every client of it). A client's label is its own, else its principal's.
 */
export class ClientLabelStore {
  constructor(private readonly db: Kysely<Database>, private readonly now: () => number = Date.now) {}

  /** Sets (or with null takes away) the label of a client or principal; callers check labelProblem first. */
  async set(client: string, label: string | null): Promise<boolean> {
    if (label === null) return Number((await this.db.deleteFrom('client_labels').where('client', '=', client).executeTakeFirst()).numDeletedRows) > 0;
    await this.db.insertInto('client_labels').values({ client, label: label.trim(), set_at: this.now() })
      .onConflict((oc) => oc.column('client').doUpdateSet({ label: label.trim(), set_at: this.now() })).execute();
    return true;
  }

  /** Every label, by client id or principal. */
  async all(): Promise<Map<string, string>> {
    const rows = await this.db.selectFrom('client_labels').select(['client', 'label']).orderBy('client').execute();
    return new Map(rows.map((r) => [r.client, r.label]));
  }
}

/** A client's label among the labels: its own, else its principal's. Pure. */
export function labelOf(labels: ReadonlyMap<string, string>, client: string): string | undefined {
  return labels.get(client) ?? labels.get(client.split('~')[0] ?? client);
}

/** The client id or principal a `--client` value names when it is a label (case-insensitive, exact); undefined otherwise. */
export function clientOfLabel(labels: ReadonlyMap<string, string>, value: string): string | undefined {
  const v = value.trim().toLowerCase();
  for (const [client, label] of labels) if (label.toLowerCase() === v) return client;
  return undefined;
}
