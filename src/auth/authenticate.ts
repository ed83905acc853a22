import { errors } from '../errors/catalog.js';
import type { SessionStore } from '../store/sessions.js';
import type { LegacyUser, UserStore } from '../store/users.js';
import type { JwtService } from './jwt.js';

export interface Principal {
  readonly user: LegacyUser;
  readonly via: 'jwt' | 'static';
  /** Static token id (usage ledger); undefined for JWTs. */
  readonly tokenId?: string;
}

/**
 * The principal of a JWT verified before, whose user is held in memory and active — without waiting; undefined
 * whenever anything must be read or checked (then `authenticate` decides, errors included).
 */
export function authenticateHeld(token: string, jwt: JwtService, users: UserStore): Principal | undefined {
  const claims = jwt.knownClaims(token);
  // a session-mode token is good only while its session is: that is read from the store on every request
  if (!claims || claims.session !== undefined) return undefined;
  const user = users.held(claims.id);
  return user && user.status === 'active' ? { user, via: 'jwt' } : undefined;
}

/**
 * Classifies a bearer string as Directus does: a JWT of our issuer is verified (expired → 401
 * TOKEN_EXPIRED, anything wrong → 403 INVALID_TOKEN); anything else is looked up as a static token
 * (unknown → 401 INVALID_CREDENTIALS).
 */
export async function authenticate(token: string, jwt: JwtService, users: UserStore, sessions: Pick<SessionStore, 'live'>): Promise<Principal> {
  if (jwt.claimsOurIssuer(token)) {
    const claims = await jwt.verify(token);
    // a session-mode token (its session in a claim) ends with its session: logout, rotation (after its grace period, as
    // Directus 10.10 keeps a refreshed session's old token for SESSION_REFRESH_GRACE_PERIOD), reuse revocation
    if (claims.session !== undefined && !(await sessions.live(claims.session, { grace: true }))) throw errors.invalidCredentials();
    const user = await users.byId(claims.id);
    if (!user || user.status !== 'active') throw errors.invalidCredentials();
    return { user, via: 'jwt' };
  }
  const hit = await users.userForStaticToken(token);
  if (!hit) throw errors.invalidCredentials();
  return { user: hit.user, via: 'static', tokenId: hit.tokenId };
}
