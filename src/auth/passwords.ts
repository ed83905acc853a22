import { hash, verify } from '@node-rs/argon2';

/** argon2id hashes; PHC strings exported from the legacy Directus system verify as they are. */
export const hashPassword = (plain: string): Promise<string> => hash(plain, { algorithm: 2 });

export async function verifyPassword(phc: string | null, plain: string): Promise<boolean> {
  if (!phc || !phc.startsWith('$argon2')) return false;
  try {
    return await verify(phc, plain);
  } catch {
    return false;
  }
}

/** A hash of a random password, verified against when the email is unknown so timing does not tell. */
let decoy: Promise<string> | undefined;
export const decoyHash = () => (decoy ??= hashPassword(`decoy-${Math.random()}`));
