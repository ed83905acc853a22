import type { Kysely } from 'kysely';
import type { SecretBox } from './crypto.js';
import type { Database } from './schema.js';

const CHECK_KEY = 'encryption_key_check';
const PLAIN = 'legacy-gateway key check';

export class WrongEncryptionKeyError extends Error {
  constructor(detail: string) {
    super(`ENCRYPTION_KEY does not open the data in this store (DATABASE_URL): ${detail}. Start with the key the store was written ` +
      'with; a new key would leave every stored v1 key unreadable.');
    this.name = 'WrongEncryptionKeyError';
  }
}

/**
 * Proves ENCRYPTION_KEY against the store at start-up: a value sealed with the key on first start must open with it
 * (a store written before this check: one stored v1 key must open). A wrong key refuses to start instead of turning
 * every data request into a 500 later.
 */
export async function verifyEncryptionKey(db: Kysely<Database>, box: SecretBox): Promise<void> {
  const row = await db.selectFrom('gateway_meta').select('value').where('key', '=', CHECK_KEY).executeTakeFirst();
  if (row) {
    let plain: string | undefined;
    try { plain = box.open(row.value); } catch { plain = undefined; }
    if (plain !== PLAIN) throw new WrongEncryptionKeyError('the key check sealed at first start does not open');
    return;
  }
  const user = await db.selectFrom('users').select(['v1_key_enc']).limit(1).executeTakeFirst();
  if (user) {
    try { box.open(user.v1_key_enc); } catch { throw new WrongEncryptionKeyError('a stored v1 key does not open'); }
  }
  await db.insertInto('gateway_meta').values({ key: CHECK_KEY, value: box.seal(PLAIN) }).onConflict((oc) => oc.column('key').doNothing()).execute();
}
