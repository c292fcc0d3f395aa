// Invite codes and lanes in MemoryStore (mirrors lua/includes/lanes.lua, lua/addCodes-2.lua
// and the lane parts of lua/enterIfAbsent-10.lua): one line per named lane, scored
// laneIndex · LANE_SPAN + entry sequence like the `lanes` zset.

import { LANE_SPAN, mergeLanes, MAX_LANES } from '../../lanes.js';
import { WaitgateConfigError } from '../../errors.js';
import type { AddCodesRequest } from '../store.js';
import { WaitingLine } from '../waiting-line.js';
import { deadlineOf, type LaneState, type QueueState } from './state.js';

export function addCodes(q: QueueState, request: AddCodesRequest): number {
  const stored = q.lanes?.lanes ?? [];
  const lanes = mergeLanes(stored, request.lanes);
  if (lanes.length > MAX_LANES) throw new WaitgateConfigError('lanes', `at most ${MAX_LANES} lanes are stored`);
  const index = lanes.findIndex((l) => l.name === request.lane);
  if (index < 0) throw new WaitgateConfigError('lane', 'is not declared');
  const state: LaneState = (q.lanes ??= { lanes: [], lines: [], carries: [], usesLeft: [], codes: new Map() });
  state.lanes = lanes;
  while (state.lines.length < lanes.length) state.lines.push(new WaitingLine());
  let added = 0;
  for (const code of request.codes) {
    if (state.codes.has(code)) continue;
    state.codes.set(code, { lane: request.lane, usesLeft: request.uses });
    added++;
  }
  state.usesLeft[index] = (state.usesLeft[index] ?? 0) + added * request.uses;
  return added;
}

/** The lane line a member waits in, and its 1-based index, or null (also without lanes). */
export function laneOf(q: QueueState, memberId: string): { index: number; line: WaitingLine } | null {
  const lines = q.lanes?.lines ?? [];
  for (let i = 0; i < lines.length; i++) if (lines[i]!.has(memberId)) return { index: i + 1, line: lines[i]! };
  return null;
}

/**
 * For a member with a code: null if it is placed already (waiting in any lane or holding a
 * live token: the code is neither checked nor spent), else the code's 1-based lane index,
 * or false for a code that gives no place. Reads only.
 */
export function codeLaneFor(q: QueueState, memberId: string, code: string, now: number): number | false | null {
  const record = q.tokens.get(memberId);
  if ((record && deadlineOf(record) > now) || q.waiting.has(memberId) || laneOf(q, memberId)) return null;
  const stored = q.lanes?.codes.get(code);
  if (!stored || stored.usesLeft < 1) return false;
  const index = q.lanes!.lanes.findIndex((l) => l.name === stored.lane);
  return index < 0 ? false : index + 1;
}

/** Joins the code's lane at its back and spends one use of the code, in one step. */
export function joinLane(q: QueueState, memberId: string, index: number, code: string, seq: number): void {
  const state = q.lanes!;
  state.lines[index - 1]!.insert(memberId, index * LANE_SPAN + seq);
  state.codes.get(code)!.usesLeft--; // a spent code stays, with 0 uses left: adding it again restores nothing
  state.usesLeft[index - 1] = (state.usesLeft[index - 1] ?? 0) - 1;
}

/** Members waiting in the named lanes. */
export function laneWaiting(q: QueueState): number {
  return (q.lanes?.lines ?? []).reduce((sum, line) => sum + line.size, 0);
}
