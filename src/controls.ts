// Runtime controls of a queue (setControls / controls): the patch schema, the controls
// in force, and the auditable draw of a shuffled pre-queue.

import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { normalizeMemberId, type MemberId } from './member-id.js';
import { MAX_BURST, parseStrict, type AdmissionOptions } from './options.js';
import { rateInForce } from './admission-control.js';
import { burstInForce } from './rates.js';
import type { StoredControls } from './store/store.js';
import type { ControlLimits, ControlsPatch, QueueMode } from './types.js';
import { WaitgateConfigError } from './errors.js';

/** The controls in force, shared by every instance through the store. */
export interface QueueControls {
  /** `open` as configured; `paused` admits nobody (members keep their places); `passthrough` lets everyone through; `closed` refuses new members. */
  mode: QueueMode;
  /** Up to 280 characters shown to waiting members; null for none. */
  message: string | null;
  admitRatePerSecond: number;
  admitBurst: number;
  maxActive: number | null;
  /** Epoch ms of a scheduled opening; null: open now. */
  opensAt: number | null;
  /** The pre-queue is drawn at random at `opensAt`. */
  shuffle: boolean;
  /** Hex SHA-256 of the draw seed's 32 bytes, published before opening; null without a draw. */
  drawCommitment: string | null;
  /** The draw seed (hex), readable once the queue has opened; null before (and without a draw). */
  drawSeed: string | null;
  /** The cohort commitment: the head (hex SHA-1) and length of the pre-queue's hash chain, frozen at the opening (docs/fair-entry.md); null before it, and without a drawn member. */
  cohortCommitment: { head: string; length: number } | null;
  /** Units of stock left; null without stock. At 0 the queue closes with {@link soldOutMessage}. */
  stock: number | null;
  /** The message the queue closes with when stock runs out. */
  soldOutMessage: string;
  /** Instant entry while nobody waits and the rate, `maxActive` and stock allow (the control, else the option). */
  safetyNet: boolean;
  /** Grows by one on every change. */
  version: number;
}

/** The message of a sold-out queue unless `soldOutMessage` sets another (lua/includes/controls.lua SOLD_OUT). */
export const DEFAULT_SOLD_OUT_MESSAGE = 'Sold out';

export type { ControlsPatch, QueueMode } from './types.js';

export const MAX_MESSAGE_LENGTH = 280;

// C0 and C1 control characters other than the line break are refused in a message.
// eslint-disable-next-line no-control-regex -- control characters are what it matches
const CONTROL_CHARACTERS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

const messageSchema = z
  .string()
  .min(1, 'must not be empty (null for none)')
  .max(MAX_MESSAGE_LENGTH, `must be at most ${MAX_MESSAGE_LENGTH} characters`)
  .refine((m) => !CONTROL_CHARACTERS.test(m), 'must not contain control characters');

const patchSchema = z
  .strictObject({
    mode: z.enum(['open', 'paused', 'passthrough', 'closed']).optional(),
    message: messageSchema.nullable().optional(),
    stock: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().optional(),
    soldOutMessage: messageSchema.nullable().optional(),
    admitRatePerSecond: z.number().finite().gt(0).max(1_000_000).nullable().optional(),
    admitBurst: z.number().int().min(1).max(MAX_BURST).optional(),
    maxActive: z.number().int().min(1).nullable().optional(),
    opensAt: z.number().int().min(0).max(8.64e15).nullable().optional(),
    shuffle: z.boolean().optional(),
    safetyNet: z.boolean().optional(),
  })
  .refine((patch) => Object.keys(patch).length > 0, { message: 'must change at least one field' });

/**
 * Validates a `setControls` patch as strictly as the constructor's options.
 * @throws {@link WaitgateConfigError} naming the first unknown or bad field.
 */
export function parseControlsPatch(patch: unknown): ControlsPatch {
  return parseStrict(patchSchema, patch) as ControlsPatch;
}

/**
 * Refuses a patch beyond the queue's `limits` option (the guardrails), before anything is written.
 * @throws {@link WaitgateConfigError} naming the field.
 */
export function checkLimits(patch: ControlsPatch, limits: Readonly<ControlLimits>): ControlsPatch {
  const { admitRatePerSecond: rate, admitBurst: burst, maxActive } = patch;
  if (limits.maxRatePerSecond !== undefined && typeof rate === 'number' && rate > limits.maxRatePerSecond)
    throw new WaitgateConfigError('admitRatePerSecond', `must be at most ${limits.maxRatePerSecond} (limits.maxRatePerSecond)`);
  if (limits.maxBurst !== undefined && burst !== undefined && burst > limits.maxBurst)
    throw new WaitgateConfigError('admitBurst', `must be at most ${limits.maxBurst} (limits.maxBurst)`);
  if (limits.maxActive !== undefined && maxActive !== undefined && (maxActive === null || maxActive > limits.maxActive))
    throw new WaitgateConfigError('maxActive', `must be at most ${limits.maxActive} (limits.maxActive), not ${maxActive === null ? 'no cap' : maxActive}`);
  return patch;
}

/** A fresh draw seed (32 bytes from the OS CSPRNG, hex) and its commitment (SHA-256 of the bytes, hex). */
export function newDrawSeed(): { seed: string; commitment: string } {
  const bytes = randomBytes(32);
  return { seed: bytes.toString('hex'), commitment: createHash('sha256').update(bytes).digest('hex') };
}

/** The controls in force: the stored ones, and this instance's options where none is stored. */
export function controlsInForce(
  stored: StoredControls,
  options: { admitRatePerSecond: number; admitBurst: number; burstFollowsRate?: boolean; maxActive: number | null; admission?: AdmissionOptions; safetyNet?: boolean },
): QueueControls {
  const opened = stored.opensAt === null || stored.now >= stored.opensAt;
  const rate = rateInForce(stored.admitRatePerSecond, stored.adaptiveRate, options);
  return {
    mode: stored.mode ?? 'open',
    message: stored.message,
    admitRatePerSecond: rate,
    admitBurst: burstInForce(stored.admitBurst, rate, options),
    maxActive: stored.maxActive === undefined ? options.maxActive : stored.maxActive,
    opensAt: stored.opensAt,
    shuffle: stored.shuffle,
    drawCommitment: stored.drawCommitment,
    drawSeed: opened ? stored.drawSeed : null,
    cohortCommitment: opened && stored.cohortHead ? { head: stored.cohortHead, length: stored.cohortLength ?? 0 } : null,
    stock: stored.stock ?? null,
    soldOutMessage: stored.soldOutMessage ?? DEFAULT_SOLD_OUT_MESSAGE,
    safetyNet: stored.safetyNet ?? options.safetyNet ?? false,
    version: stored.version,
  };
}

/**
 * A member's place in a shuffled pre-queue: the first 40 bits (10 hex digits) of
 * SHA-1(`<seed hex>:<member id>`). `lua/includes/controls.lua` computes the same.
 */
export function drawScore(seedHex: string, memberId: string): number {
  return parseInt(createHash('sha1').update(`${seedHex}:${memberId}`).digest('hex').slice(0, 10), 16);
}

/**
 * The order in which a shuffled pre-queue is admitted at its opening, for anyone to
 * check a draw after `drawSeed` is published: members by increasing
 * `drawScore(seed, id)`, ties by the id's UTF-8 bytes. It depends only on the seed and
 * the set of ids (duplicates and the order given do not matter). Pure.
 *
 * @example
 * ```ts
 * const { drawSeed } = await queue.controls();
 * drawOrder(drawSeed!, ['alice', 'bob', 'carol']); // e.g. ['carol', 'alice', 'bob']
 * ```
 */
export function drawOrder(seedHex: string, memberIds: readonly MemberId[]): string[] {
  if (typeof seedHex !== 'string' || !/^[0-9a-f]{64}$/.test(seedHex))
    throw new TypeError('drawOrder: the seed must be 64 lower-case hex digits (controls().drawSeed)');
  const ids = [...new Set(memberIds.map((id) => normalizeMemberId(id)))];
  const scored = ids.map((id) => ({ id, score: drawScore(seedHex, id) }));
  scored.sort((a, b) => a.score - b.score || Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)));
  return scored.map((s) => s.id);
}
