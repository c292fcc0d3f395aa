// Taking members from the head of a line for an admission step (mirrors
// lua/includes/takeFromHead.lua and lua/includes/laneAdmission.lua): the members met are
// admitted, dropped as abandoned, or held (left at the head).

import { LANE_SPAN, laneQuotas } from '../../lanes.js';
import type { WaitingLine } from '../waiting-line.js';
import type { LaneState } from './state.js';

/** lua/includes/takeFromHead.lua MAX_HELD: per line and step. */
const MAX_HELD = 256;

export interface TakeRules {
  now: number;
  /** null: nobody is dropped. */
  abandonAfter: number | null;
  /** null: nobody is held. */
  holdSilent: number | null;
  /** Drops this step may make, over every line. */
  dropBudget: number;
  seen: Map<string, number>;
}

export interface Taken {
  live: string[];
  /** Entry scores of `live` (a lane member's as the default lane's would be: score base + sequence). */
  liveScores: number[];
  abandoned: string[];
  held: number;
}

/** Takes up to `n` live members from the head of `line`; drops and holds as the rules say. */
export function takeFromHead(line: WaitingLine, n: number, rules: TakeRules, taken: Taken = { live: [], liveScores: [], abandoned: [], held: 0 }): Taken {
  const { now, abandonAfter, holdSilent, seen } = rules;
  const held = new Set<string>();
  const wanted = taken.live.length + n;
  let examined = 0; // the members before this rank are decided or held
  while (taken.live.length < wanted) {
    const member = line.memberAtRank(examined);
    if (member === null) break;
    const seenAt = seen.get(member);
    if (abandonAfter !== null && (seenAt === undefined || now - seenAt > abandonAfter)) {
      if (taken.abandoned.length >= rules.dropBudget) break; // out of drops: it stays in place, and so does everyone behind it
      taken.abandoned.push(member);
      seen.delete(member);
    } else if (holdSilent !== null && held.size < MAX_HELD && now - seenAt! > holdSilent) {
      // Beyond MAX_HELD a silent member is admitted, as without holding: the held never slow the line down.
      held.add(member);
    } else {
      taken.live.push(member);
      taken.liveScores.push(line.seqOf(member)!);
      seen.delete(member);
    }
    examined++;
  }
  line.removeHeadExcept(examined, held);
  taken.held += held.size;
  return taken;
}

/**
 * The step's `n` places shared between the default lane and the named lanes by their
 * shares (src/lanes.ts laneQuotas); the admitted in the order of their entry sequence.
 * The carries are kept when the step admitted anyone (as the script writes meta lc).
 */
export function takeByShares(waiting: WaitingLine, lanes: LaneState, n: number, lengths: readonly number[], scoreBase: number, rules: TakeRules): Taken {
  const { quotas, defaultQuota, carries } = laneQuotas(n, lanes.lanes, lengths, waiting.size, lanes.carries);
  const taken = takeFromHead(waiting, defaultQuota, rules);
  const picked = taken.live.map((member, i) => ({ member, score: taken.liveScores[i]! }));
  quotas.forEach((quota, i) => {
    if (quota < 1) return;
    const band = (i + 1) * LANE_SPAN;
    const from = taken.live.length;
    takeFromHead(lanes.lines[i]!, quota, rules, taken);
    for (let j = from; j < taken.live.length; j++) picked.push({ member: taken.live[j]!, score: scoreBase + taken.liveScores[j]! - band });
  });
  picked.sort((a, b) => a.score - b.score);
  if (picked.length > 0) lanes.carries = carries;
  return { ...taken, live: picked.map((p) => p.member), liveScores: picked.map((p) => p.score) };
}
