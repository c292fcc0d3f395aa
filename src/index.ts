// waitgate: a virtual waiting queue in front of an order API. Core, stores, errors and types.

export {
  WaitingQueue,
  STORE_CALL_CHANNEL,
  type StoreCallMessage,
  type SettledClaim,
  type WaitingQueueEvents,
  type RecoveryNotice,
  type Listener as WaitingQueueListener,
} from './waiting-queue.js';
export type { Admitter, AdmitterOptions } from './admitter.js';
export type { ReleaseOptions } from './release-options.js';
export { RedisStore, type RedisStoreOptions, type RedisClientLike } from './store/redis-store.js';
export type { SubscriberLike, IoredisSubscriberLike, NodeRedisSubscriberLike } from './store/head-moves.js';
export { MemoryStore, type MemoryStoreOptions } from './store/memory-store.js';
export {
  WaitgateError,
  WaitgateConfigError,
  InvalidMemberIdError,
  EntryTokenError,
  StoreUnavailableError,
  QueueStateLostError,
  QueueClosedError,
  IdentityLimitError,
  CodeInvalidError,
  isWaitgateError,
  type EntryTokenErrorCode,
} from './errors.js';
export { normalizeMemberId, type MemberId } from './member-id.js';
export { toHttpResponse, type HttpErrorResponse, type HttpErrorCode, type ErrorBody } from './http/error-response.js';
export type { PositionCacheOptions } from './position-cache.js';
export { DEFAULT_POLLING_INTERVALS, type WaitingQueueOptions, type PollingTier, type QueueConfig, type ControlLimits } from './options.js';
export type { QueueEnterOptions } from './enter-options.js';
export type { Position, PositionStatus, Admission, AdmittedMember, Claim, QueueStats, QueueTotals, WaitFigures, MemberInspection } from './types.js';
export type { SigningOptions, SigningKeyOption, PublicJwk } from './signing/keys.js';
export type { EntryPassKeys, EntryPassJwk } from './pass/verify.js';
export { drawOrder, type QueueControls, type ControlsPatch, type QueueMode } from './controls.js';
export { CONTROLS_LOG_CAP, STOCK_ACTOR, type ControlsLogEntry, type SetControlsOptions } from './controls-log.js';
export type { DrawReport } from './draw-report.js';
export type { Lane, LaneStats } from './types.js';
export type { AddCodesOptions } from './invite-codes.js';
// For custom stores: the Store interface and what it exchanges with WaitingQueue.
export type {
  Store,
  StoreWarning,
  MemberSnapshot,
  AdmissionWindow,
  AdmitRequest,
  AdmitResult,
  ClaimRequest,
  ClaimResult,
  SettleRequest,
  ReleaseRequest,
  ConsumeRequest,
  StatsSnapshot,
  QueueSnapshot,
  ControlsView,
  StoredControls,
  ControlsRequest,
  EnterOptions,
  SafetyNetRequest,
  IdentityRequest,
  CohortPage,
  AddCodesRequest,
  HeadMovesListener,
  HeadMovesWatch,
} from './store/store.js';
