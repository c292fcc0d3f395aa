// Decoding the scripts' positional replies into the Store's snapshots. Each layout is
// documented in its script's header; the indices live here and nowhere else.

import type { QueueMode } from '../controls.js';
import { CodeInvalidError, IdentityLimitError, QueueClosedError } from '../errors.js';
import { decodeStatsLanes, withSharedLanes } from './redis-lanes.js';
import { WAIT_SLOTS, parseWaitSlot } from '../queue-figures.js';
import { CLAIM_STATUS, POSITION_STATUS } from './status-codes.js';
import type { MemberInspection } from '../types.js';
import type { AdmissionWindow, ClaimResult, ControlsView, MemberSnapshot, QueueSnapshot, StatsSnapshot } from './store.js';

/** A script's reply as ioredis hands it over. */
export type Reply = Array<string | number | null>;
export type Value = Reply[number] | undefined;

/** lua/includes/generation.lua: the queue's state vanished. */
export const STATE_LOST = -1;

/** True for the `{ STATE_LOST }` reply of any script (or a bare STATE_LOST). */
export function isStateLost(reply: unknown): boolean {
  return reply === STATE_LOST || (Array.isArray(reply) && reply.length === 1 && reply[0] === STATE_LOST);
}

export const num = (v: Value): number | null => (v === null || v === undefined || v === '' ? null : Number(v));

/** The values of lua/includes/admissionWindow.lua WINDOW_FIELDS, starting at `at`. */
function decodeWindow(r: Reply, at: number): AdmissionWindow {
  return {
    start: num(r[at]),
    current: num(r[at + 1]) ?? 0,
    previous: num(r[at + 2]) ?? 0,
    first: num(r[at + 3]),
    last: num(r[at + 4]),
    movedAt: num(r[at + 5]),
    pace: num(r[at + 6]),
  };
}

const WINDOW_LENGTH = 7;

const MODES: readonly QueueMode[] = ['open', 'paused', 'passthrough', 'closed'];
export const str = (v: Value): string | null => (v === null || v === undefined || v === '' ? null : String(v));
/** A stored mode, or null for none (or one this version does not know). */
export const modeOf = (v: Value): QueueMode | null => {
  const mode = str(v);
  return mode !== null && (MODES as readonly string[]).includes(mode) ? (mode as QueueMode) : null;
};

/** A stored flag: '1' true, '0' false, absent null (never set). */
export const flagOf = (v: Value): boolean | null => (str(v) === '1' ? true : str(v) === '0' ? false : null);

/** The values of lua/includes/controls.lua POSITION_CONTROL_FIELDS (cm cx co cs pb cr cb ar sk sa cn), starting at `at`. */
function decodeControlsView(r: Reply, at: number): ControlsView {
  return {
    mode: modeOf(r[at]) ?? 'open',
    message: str(r[at + 1]),
    opensAt: num(r[at + 2]),
    shuffle: str(r[at + 3]) === '1',
    preQueueFrom: num(r[at + 4]),
    admitRatePerSecond: num(r[at + 5]),
    admitBurst: num(r[at + 6]),
    adaptiveRate: num(r[at + 7]),
    stockLeft: num(r[at + 8]),
    stockAvailable: num(r[at + 9]),
    safetyNet: flagOf(r[at + 10]),
  };
}

const CONTROLS_LENGTH = 11;

/** lua/includes/controls.lua: codes of enter replies that are not a position. */
const QUEUE_CLOSED = -2;
const NEED_TOKEN = -3;
/** One member of a batch that arrived after its deadline (lua/enterIfAbsent-10.lua): nothing was written for it. */
const LATE = -4;
/** One member of a batch with malformed arguments: nothing was written for it, the others stand. */
const BAD_ARGUMENTS = -5;
/** lua/includes/identity.lua: a new member whose identity holds its limit of places; nothing was written for it. */
const IDENTITY_LIMIT = -6;
/** An invite code that gives no place (lua/enterIfAbsent-10.lua): nothing was written for it. */
const CODE_INVALID = -7;

/** The error of one member of a batch whose own reply is a LATE or BAD_ARGUMENTS marker, or null. */
function memberError(script: string, r: Reply): Error | null {
  if (r.length !== 1) return null;
  if (r[0] === LATE) return new Error(`${script}: arrived after its deadline; nothing written`);
  if (r[0] === BAD_ARGUMENTS) return new Error(`${script}: bad arguments; nothing written`);
  return null;
}

/**
 * A member's compact reply of a batch script ({ status, rank, total, token, tokenExp,
 * seq[, joined] }) with what the call sent once for all (`shared`: { now, generation,
 * window, controls }, lua/includes/readPosition.lua sharedReply), as the full
 * positionReply. Other replies (markers such as QUEUE_CLOSED or LATE) pass unchanged.
 */
export function expandPosition(compact: Reply, shared: Reply): Reply {
  if (compact.length < 6 || Number(compact[0]) < 0) return compact;
  return [...compact.slice(0, 5), ...shared.slice(0, 1), ...compact.slice(5, 6), ...shared.slice(1, SHARED_LENGTH), ...compact.slice(6)];
}

/** The fixed part of sharedReply; the lanes follow it while the queue keeps any (src/store/redis-lanes.ts). */
export const SHARED_LENGTH = 2 + WINDOW_LENGTH + CONTROLS_LENGTH;

/** A compact member reply of a batch script, decoded with what its call shared (lanes included). */
export function decodeCompactPosition(compact: Reply, shared: Reply): { snapshot: MemberSnapshot; generation: Value } {
  const decoded = decodeEnter(expandPosition(compact, shared));
  withSharedLanes(decoded.snapshot, shared, SHARED_LENGTH);
  return decoded;
}

/** What every member's answer of one batch call shares, decoded once for the call. */
export interface SharedPosition {
  now: number;
  generation: Value;
  window: AdmissionWindow;
  controls: ControlsView;
}

/** lua/includes/readPosition.lua sharedReply: { now, generation|false, window (6), controls (7) }. */
export function decodeShared(shared: Reply): SharedPosition {
  return { now: Number(shared[0]), generation: shared[1], window: decodeWindow(shared, 2), controls: decodeControlsView(shared, 2 + WINDOW_LENGTH) };
}

/**
 * The lean reply of lua/enterIfAbsent-10.lua for a member its batch joined: the total
 * waiting right after it joined, alone (it is last: rank total − 1; its entry score is
 * total + `offset`, sent once per call). The snapshots of one call share `shared`'s
 * window and controls objects (nothing writes to a snapshot's parts).
 */
export function leanEnterSnapshot(total: number, offset: number, shared: SharedPosition): MemberSnapshot {
  return {
    status: 'WAITING',
    rank: total - 1,
    totalWaiting: total,
    entryToken: null,
    entryTokenExpiresAt: null,
    now: shared.now,
    score: total + offset,
    window: shared.window,
    controls: shared.controls,
    joined: true,
  };
}

/** lua/enterIfAbsent-10.lua's reply: the shared part, the lean replies' offset (null for none), then one reply per member. */
export type EnterBatchReply = Array<Reply | number | null>;

/**
 * A batch of enters' replies (lua/enterIfAbsent-10.lua), one snapshot or error per member.
 * `learn(generation, now)` is told each answer's generation and Redis time (once for all
 * the lean replies: they share them); not for a `needsToken` answer, which has neither.
 */
export function decodeEnterBatch(reply: EnterBatchReply, learn: (generation: Value, now: number) => void): Array<MemberSnapshot | Error> {
  const shared = reply[0] as Reply;
  const offset = Number(reply[1]);
  let common: SharedPosition | undefined;
  const replies = new Array<MemberSnapshot | Error>(reply.length - 2);
  for (let i = 2; i < reply.length; i++) {
    const one = reply[i]!;
    if (typeof one === 'number') {
      common ??= decodeShared(shared);
      replies[i - 2] = withSharedLanes(leanEnterSnapshot(one, offset, common), shared, SHARED_LENGTH);
      continue;
    }
    try {
      const { snapshot, generation } = decodeCompactPosition(one as Reply, shared);
      if (!snapshot.needsToken) learn(generation, snapshot.now);
      replies[i - 2] = snapshot;
    } catch (error) {
      replies[i - 2] = error instanceof Error ? error : new Error(String(error));
    }
  }
  if (common) learn(common.generation, common.now);
  return replies;
}

/** lua/includes/readPosition.lua, positionReply. */
const POSITION = {
  status: 0,
  rank: 1,
  total: 2,
  token: 3,
  tokenExp: 4,
  now: 5,
  score: 6,
  generation: 7,
  window: 8,
  controls: 8 + WINDOW_LENGTH,
  /** enter only: 1 when the call joined the member (lua/enterIfAbsent-10.lua). */
  joined: 8 + WINDOW_LENGTH + CONTROLS_LENGTH,
} as const;

/**
 * An enter reply: a position, or `{ QUEUE_CLOSED, message }` (throws
 * {@link QueueClosedError}), or `{ IDENTITY_LIMIT }` (throws {@link IdentityLimitError}), or `{ NEED_TOKEN }` (a snapshot flagged `needsToken`).
 */
export function decodeEnter(r: Reply): { snapshot: MemberSnapshot; generation: Value } {
  const error = memberError('enter', r);
  if (error) throw error;
  if (r[0] === QUEUE_CLOSED) throw new QueueClosedError(str(r[1]));
  if (r[0] === IDENTITY_LIMIT && r.length === 1) throw new IdentityLimitError();
  if (r[0] === CODE_INVALID && r.length === 1) throw new CodeInvalidError();
  if (r[0] === NEED_TOKEN && r.length === 1) {
    const snapshot: MemberSnapshot = {
      status: 'NOT_ENTERED',
      rank: null,
      totalWaiting: 0,
      entryToken: null,
      entryTokenExpiresAt: null,
      now: 0,
      window: { start: null, current: 0, previous: 0, first: null },
      needsToken: true,
    };
    return { snapshot, generation: undefined };
  }
  const decoded = decodePosition(r);
  if (r[POSITION.joined] === 1) decoded.snapshot.joined = true;
  return decoded;
}

export function decodePosition(r: Reply): { snapshot: MemberSnapshot; generation: Value } {
  const status = POSITION_STATUS[Number(r[POSITION.status])];
  if (!status) throw new Error(`position replied with an unknown status ${String(r[POSITION.status])}`);
  const token = r[POSITION.token];
  return {
    generation: r[POSITION.generation],
    snapshot: {
      status,
      rank: num(r[POSITION.rank]),
      totalWaiting: Number(r[POSITION.total]),
      entryToken: token === null || token === undefined ? null : String(token),
      entryTokenExpiresAt: num(r[POSITION.tokenExp]),
      now: Number(r[POSITION.now]),
      score: num(r[POSITION.score]),
      window: decodeWindow(r, POSITION.window),
      controls: decodeControlsView(r, POSITION.controls),
    },
  };
}

/** lua/inspect-5.lua. */
const INSPECT_STATUS = ['NOT_ENTERED', 'WAITING', 'READY', 'CLAIMED'] as const;

export function decodeInspect(r: Reply): { inspection: Omit<MemberInspection, 'memberId'>; generation: Value } {
  const status = INSPECT_STATUS[Number(r[0])];
  if (!status) throw new Error(`inspect replied with an unknown status ${String(r[0])}`);
  return {
    generation: r[8],
    inspection: {
      status,
      rank: num(r[1]),
      totalWaiting: Number(r[2]),
      tokenExpiresAt: num(r[3]),
      leaseExpiresAt: num(r[4]),
      pickupBy: num(r[5]),
      lastSeenAt: num(r[6]),
      now: Number(r[7]),
    },
  };
}

/** lua/stats-5.lua. */
const STATS = {
  waiting: 0,
  active: 1,
  claimed: 2,
  now: 3,
  generation: 4,
  abandoned: 5,
  window: 6,
  totals: 6 + WINDOW_LENGTH,
  waitSlots: 10 + WINDOW_LENGTH,
  pinnedRate: 10 + WINDOW_LENGTH + WAIT_SLOTS,
  adaptiveRate: 11 + WINDOW_LENGTH + WAIT_SLOTS,
} as const;

export function decodeStats(r: Reply): { stats: StatsSnapshot; generation: Value } {
  const lanes = decodeStatsLanes(r, STATS.adaptiveRate + 1, Number(r[STATS.waiting]));
  const decoded: { stats: StatsSnapshot; generation: Value } = {
    generation: r[STATS.generation],
    stats: {
      waiting: Number(r[STATS.waiting]),
      active: Number(r[STATS.active]),
      claimed: Number(r[STATS.claimed]),
      abandoned: Number(r[STATS.abandoned]),
      now: Number(r[STATS.now]),
      window: decodeWindow(r, STATS.window),
      totals: {
        entered: Number(r[STATS.totals] ?? 0),
        admitted: Number(r[STATS.totals + 1] ?? 0),
        abandoned: Number(r[STATS.abandoned]),
        consumed: Number(r[STATS.totals + 2] ?? 0),
        expired: Number(r[STATS.totals + 3] ?? 0),
      },
      waitSlots: r.slice(STATS.waitSlots, STATS.pinnedRate).map((slot) => parseWaitSlot(typeof slot === 'string' ? slot : null)),
      pinnedRate: num(r[STATS.pinnedRate]),
      adaptiveRate: num(r[STATS.adaptiveRate]),
    },
  };
  if (lanes) decoded.stats.lanes = lanes;
  return decoded;
}

/** lua/queueSnapshot-2.lua: the fixed part, then (rank, seq) pairs to the end. */
const SNAPSHOT = {
  total: 0,
  headSeq: 1,
  lastSeq: 2,
  now: 3,
  generation: 4,
  window: 5,
  controls: 5 + WINDOW_LENGTH,
  headMoves: 5 + WINDOW_LENGTH + CONTROLS_LENGTH,
  probes: 6 + WINDOW_LENGTH + CONTROLS_LENGTH,
} as const;

export function decodeQueueSnapshot(r: Reply): { snapshot: QueueSnapshot; generation: Value } {
  const probes: Array<{ rank: number; seq: number }> = [];
  for (let i = SNAPSHOT.probes; i + 1 < r.length; i += 2) probes.push({ rank: Number(r[i]), seq: Number(r[i + 1]) });
  return {
    generation: r[SNAPSHOT.generation],
    snapshot: {
      totalWaiting: Number(r[SNAPSHOT.total]),
      headSeq: num(r[SNAPSHOT.headSeq]),
      lastSeq: num(r[SNAPSHOT.lastSeq]),
      now: Number(r[SNAPSHOT.now]),
      window: decodeWindow(r, SNAPSHOT.window),
      controls: decodeControlsView(r, SNAPSHOT.controls),
      headMoves: Number(r[SNAPSHOT.headMoves]),
      probes,
    },
  };
}

/** lua/popAndIssue-9.lua: the fixed part (with the count held), the dropped members (count, ids), then the admitted ones. */
const ADMIT = { expiresAt: 0, active: 1, generation: 2, admittable: 3, held: 4, droppedCount: 5, dropped: 6 } as const;

export function decodeAdmit(r: Reply, tokens: readonly string[]) {
  const dropped = Number(r[ADMIT.droppedCount] ?? 0);
  const admittedAt = ADMIT.dropped + dropped;
  // The admitted members, then the wait of each (ms; -1 unknown).
  const count = (r.length - admittedAt) / 2;
  const waitsAt = admittedAt + count;
  return {
    generation: r[ADMIT.generation],
    result: {
      expiresAt: Number(r[ADMIT.expiresAt]),
      active: Number(r[ADMIT.active]),
      admittable: Number(r[ADMIT.admittable]),
      held: Number(r[ADMIT.held] ?? 0),
      abandoned: r.slice(ADMIT.dropped, admittedAt).map(String),
      admitted: r.slice(admittedAt, waitsAt).map((memberId, i) => {
        const waitedMs = Number(r[waitsAt + i]);
        return { memberId: String(memberId), entryToken: tokens[i]!, waitedMs: waitedMs >= 0 ? waitedMs : null };
      }),
    },
  };
}

/** lua/claimToken-4.lua: { status, leaseExpiresAt?, now? }. */
export function decodeClaim(r: Reply): ClaimResult {
  const error = memberError('claim', r);
  if (error) throw error;
  const status = CLAIM_STATUS[Number(r[0])];
  if (status === 'CLAIMED') return { status, expiresAt: Number(r[1]) };
  if (status === 'INVALID') return { status };
  if (status === 'IN_USE') return { status, leaseExpiresAt: Number(r[1]), now: Number(r[2]) };
  throw new Error(`claimToken replied with an unknown status ${String(r[0])}`);
}

/** One member's outcome in a batch: its value, or its own error (the others' stand). */
export function settle<T>(decode: () => T): T | Error {
  try {
    return decode();
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** revokedAt's reply: the moment (ms) as a string, or null (false in Lua) when never revoked. */
export function decodeRevokedAt(reply: Reply): number | null {
  if (reply === null) return null;
  const at = Number(reply);
  if (!Number.isFinite(at)) throw new Error('waitgate: unexpected revokedAt reply');
  return at;
}
