import {
  V1BadRequestError, V1ContractError, V1Error, V1ForbiddenError, V1NetworkError, V1NotFoundError, V1PaymentRequiredError,
  V1RateLimitedError, V1ServerError, V1UnauthorizedError, V1ValidationError,
} from '../v1/errors.js';
import { GatewayError, errors } from './catalog.js';

export const REBIND_MESSAGE = 'The v1 API key bound to this user was rejected (revoked or replaced); an operator must rebind it.';

/** How a v1 failure looks to a legacy client. */
export function fromV1Error(e: V1Error): GatewayError {
  if (e instanceof V1UnauthorizedError) return errors.invalidCredentials(REBIND_MESSAGE);
  if (e instanceof V1NotFoundError || e instanceof V1ForbiddenError) return errors.forbidden();
  if (e instanceof V1PaymentRequiredError) {
    return errors.paymentRequired("The account's render credits are exhausted: v1 refused to bill another render (402). Add credits, then try again.");
  }
  if (e instanceof V1ValidationError) {
    return errors.invalidPayload(e.summary || 'v1 rejected the request.', { details: e.details });
  }
  if (e instanceof V1BadRequestError) return errors.invalidPayload(e.message.replace(/^v1 \S+ \S+ answered 400: /, ''));
  if (e instanceof V1RateLimitedError) return errors.serviceUnavailable('v1 is rate limiting requests; retry shortly.');
  if (e instanceof V1ContractError) return errors.serviceUnavailable('v1 answered outside its contract.');
  if (e instanceof V1NetworkError) return errors.serviceUnavailable(e.timedOut ? 'v1 did not answer in time.' : 'v1 could not be reached.');
  if (e instanceof V1ServerError) return errors.serviceUnavailable('v1 failed to answer.');
  return errors.serviceUnavailable('v1 failed.');
}
