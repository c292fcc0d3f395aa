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
  /** The HTTP status this error answers with (see `toHttpResponse`). */
  readonly statusCode: number;

  constructor(code: string, message: string, options?: { cause?: unknown; statusCode?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.statusCode = options?.statusCode ?? 500;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/**
 * An option passed to `WaitingQueue`, `RedisStore` or `MemoryStore` is unknown or
 * has a bad value. Code `CONFIG_INVALID`; `option` names the offending option.
 * A mistake in the server's code, not the client's: HTTP 500.
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
    super('INVALID_MEMBER_ID', message, { statusCode: 400 });
  }
}

/**
 * An entry token cannot be claimed. `code` is `MISSING` (no token given, HTTP 401),
 * `INVALID` (not this member's live token: wrong, expired, consumed or never
 * issued, HTTP 401) or `IN_USE` (claimed by another request's live lease, HTTP 409,
 * with `retryAfterSeconds`). The message never contains the token.
 */
export class EntryTokenError extends WaitgateError {
  declare readonly code: EntryTokenErrorCode;
  /**
   * `IN_USE` only: whole seconds until the other request's lease ends, when the store
   * said (RedisStore and MemoryStore do). By then the token is usable again unless
   * that request consumed or released it.
   */
  readonly retryAfterSeconds: number | null;

  constructor(code: EntryTokenErrorCode, options: { retryAfterSeconds?: number | null } = {}) {
    super(code, ENTRY_TOKEN_MESSAGES[code], { statusCode: code === 'IN_USE' ? 409 : 401 });
    this.retryAfterSeconds = code === 'IN_USE' ? (options.retryAfterSeconds ?? null) : null;
  }
}

const ENTRY_TOKEN_MESSAGES: Record<EntryTokenErrorCode, string> = {
  MISSING: 'No entry token was presented.',
  INVALID: 'The entry token is not valid for this member: wrong, expired, already used or never issued.',
  IN_USE:
    'The entry token is held by another order request, possibly an earlier one of yours that timed out; it is usable again when that request finishes or its lease ends (see Retry-After).',
};

/**
 * The store did not answer within `operationTimeoutMs`, was unreachable, or
 * answered with an error. Code `STORE_UNAVAILABLE`; HTTP 503. The outcome of the
 * call is unknown, and retrying it is always safe.
 */
export class StoreUnavailableError extends WaitgateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('STORE_UNAVAILABLE', message, { cause: options?.cause, statusCode: 503 });
  }
}

/**
 * The queue's state in Redis vanished or was replaced since this instance last
 * saw it (FLUSHALL, a restart without persistence, another dataset restored), so
 * acting on what is there now could let everyone re-enter as if new. Every call
 * fails closed with this (HTTP 503, code `QUEUE_STATE_LOST`, no Retry-After) until
 * an operator has looked and called `queue.reinitialize()` on every instance.
 *
 * Not a {@link StoreUnavailableError}: the store answers, and retrying will not
 * help until someone acts. `queue` names the queue.
 */
export class QueueStateLostError extends WaitgateError {
  declare readonly code: 'QUEUE_STATE_LOST';
  readonly queue: string;

  constructor(queue: string) {
    super(
      'QUEUE_STATE_LOST',
      `The state of queue "${queue}" vanished or was replaced in the store (a flush, or a restart without persistence); every call is refused until an operator calls reinitialize().`,
      { statusCode: 503 },
    );
    this.queue = queue;
  }
}

/**
 * The queue is closed (`setControls({ mode: 'closed' })`, e.g. sold out): a member who
 * is neither waiting nor holding a token cannot enter. Code `QUEUE_CLOSED`; HTTP 403.
 * The message is the operator's `message` when one is set.
 */
export class QueueClosedError extends WaitgateError {
  declare readonly code: 'QUEUE_CLOSED';
  /** The operator's message, or null. */
  readonly operatorMessage: string | null;

  constructor(operatorMessage: string | null) {
    super('QUEUE_CLOSED', operatorMessage ?? 'The queue is closed to new members.', { statusCode: 403 });
    this.operatorMessage = operatorMessage;
  }
}

/**
 * One place per identity (SPEC §17): the member is new, and other members of its identity
 * (`enter(memberId, { identity })`, the routes' `identity(req)`) already hold
 * `maxPlacesPerIdentity` places. Code `IDENTITY_LIMIT`; HTTP 409. Nothing was written: the
 * member may enter once one of those places is freed (left, admitted and used, or expired).
 */
export class IdentityLimitError extends WaitgateError {
  declare readonly code: 'IDENTITY_LIMIT';

  constructor() {
    super('IDENTITY_LIMIT', 'Other members of the same identity already hold the places it is allowed in this queue.', { statusCode: 409 });
  }
}

/**
 * An invite code that gives no place (SPEC §17): unknown, spent, or of a lane the queue
 * no longer stores. Code `CODE_INVALID`; HTTP 403. Nothing was written.
 */
export class CodeInvalidError extends WaitgateError {
  declare readonly code: 'CODE_INVALID';

  constructor() {
    super('CODE_INVALID', 'This invite code is unknown or has been used up.', { statusCode: 403 });
  }
}

/** True for any error thrown by any copy of waitgate. */
export function isWaitgateError(error: unknown): error is WaitgateError {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[BRAND] === true;
}
