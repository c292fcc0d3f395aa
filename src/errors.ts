// The error classes waitgate throws. Every one extends WaitgateError and carries a stable `code`.

const BRAND = Symbol.for('waitgate.error');

/** Codes of {@link EntryTokenError}. */
export type EntryTokenErrorCode = 'MISSING' | 'INVALID' | 'IN_USE';

/**
 * Base class of every error waitgate throws. Check with {@link isWaitgateError}
 * rather than `instanceof` when two copies of the package may be loaded.
 */
export class WaitgateError extends Error {
  /** A stable, machine-readable code; the message is for people and may change. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/**
 * An option passed to `WaitingQueue`, `RedisStore` or `MemoryStore` is unknown or
 * has a bad value. Code `CONFIG_INVALID`; `option` names the offending option.
 */
export class WaitgateConfigError extends WaitgateError {
  /** Dotted path of the offending option, e.g. `pollingIntervals.1.seconds`. */
  readonly option: string;

  constructor(option: string, message: string) {
    super('CONFIG_INVALID', `Invalid option "${option}": ${message}`);
    this.option = option;
  }
}

/**
 * A member id is not a non-negative safe integer nor a 1–128 character string
 * without control characters. Code `INVALID_MEMBER_ID`; HTTP 400. Thrown before
 * any store call.
 */
export class InvalidMemberIdError extends WaitgateError {
  constructor(message: string) {
    super('INVALID_MEMBER_ID', message);
  }
}

/**
 * An entry token cannot be claimed. `code` is `MISSING` (no token given, HTTP 401),
 * `INVALID` (not this member's live token: wrong, expired, consumed or never
 * issued, HTTP 401) or `IN_USE` (claimed by another request's live lease, HTTP 409).
 * The message never contains the token.
 */
export class EntryTokenError extends WaitgateError {
  declare readonly code: EntryTokenErrorCode;

  constructor(code: EntryTokenErrorCode) {
    super(code, ENTRY_TOKEN_MESSAGES[code]);
  }
}

const ENTRY_TOKEN_MESSAGES: Record<EntryTokenErrorCode, string> = {
  MISSING: 'No entry token was presented.',
  INVALID: 'The entry token is not valid for this member: wrong, expired, already used or never issued.',
  IN_USE: 'The entry token is being used by another request; retry when it has finished.',
};

/**
 * The store did not answer within `operationTimeoutMs`, was unreachable, or
 * answered with an error. Code `STORE_UNAVAILABLE`; HTTP 503. The outcome of the
 * call is unknown, and retrying it is always safe.
 */
export class StoreUnavailableError extends WaitgateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('STORE_UNAVAILABLE', message, options);
  }
}

/**
 * The queue's state in Redis vanished or was replaced since this instance last
 * saw it (FLUSHALL, a restart without persistence, another dataset restored), so
 * acting on what is there now could let everyone re-enter as if new. Every call
 * fails closed with this (HTTP 503) until `queue.reinitialize()` is called after
 * an operator has looked. Code `QUEUE_STATE_LOST`; a {@link StoreUnavailableError}.
 */
export class QueueStateLostError extends StoreUnavailableError {
  declare readonly code: string;

  constructor(queue: string) {
    super(`The state of queue "${queue}" vanished or was replaced in the store; refusing to act on it until reinitialize() is called.`);
    (this as { code: string }).code = 'QUEUE_STATE_LOST';
  }
}

/** True for any error thrown by any copy of waitgate. */
export function isWaitgateError(error: unknown): error is WaitgateError {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[BRAND] === true;
}
