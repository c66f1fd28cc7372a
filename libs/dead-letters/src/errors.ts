/**
 * What went wrong, in terms both edges map: the admin API to 400 / 404 / 409, the CLI to its exit
 * codes. A broker or database that cannot be reached is not one of these (BrokerUnavailableError,
 * DatabaseUnavailableError: 503).
 */
export type DeadLetterErrorKind = 'invalid' | 'not_found' | 'conflict';

export class DeadLetterError extends Error {
  constructor(
    readonly kind: DeadLetterErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'DeadLetterError';
  }
}
