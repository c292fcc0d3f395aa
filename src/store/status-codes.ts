// Status codes the Lua scripts reply with, and what they mean. RedisStore decodes
// through these tables; MemoryStore produces the decoded values directly, so both
// stores hand WaitingQueue the same results and it throws the same errors.

import type { PositionStatus } from '../types.js';
import type { ClaimResult } from './store.js';

/** readPosition.lua: reply[1]. */
export const POSITION_STATUS: Readonly<Record<number, PositionStatus>> = { 0: 'NOT_ENTERED', 1: 'WAITING', 2: 'READY' };

/** claimToken.lua: reply[1]. */
export const CLAIM_STATUS: Readonly<Record<number, ClaimResult['status']>> = { 1: 'CLAIMED', 2: 'INVALID', 3: 'IN_USE' };
