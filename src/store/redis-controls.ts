// A setControls patch as lua/setControls-3.lua takes it: field/value pairs over the meta
// fields of lua/includes/controls.lua, '' clearing a field.

import { WaitgateConfigError } from '../errors.js';
import type { ControlLimits, ControlsPatch } from '../types.js';
import { flagOf, modeOf, num, str, type Reply, type Value } from './redis-replies.js';
import type { CohortPage, StoredControls } from './store.js';

/** The patch's fields, in the script's encoding; a field left out of the patch is left out. */
export function encodeControlsPatch(p: ControlsPatch): Array<string | number> {
  const pairs: Array<string | number> = [];
  const put = (field: string, value: string | number | undefined) => {
    if (value !== undefined) pairs.push(field, value);
  };
  put('cm', p.mode);
  put('cx', p.message === null ? '' : p.message);
  put('cr', p.admitRatePerSecond === undefined ? undefined : p.admitRatePerSecond === null ? '' : String(p.admitRatePerSecond));
  put('cb', p.admitBurst);
  put('ca', p.maxActive === null ? -1 : p.maxActive);
  put('co', p.opensAt === null ? '' : p.opensAt);
  put('cs', p.shuffle === undefined ? undefined : p.shuffle ? '1' : '0');
  put('sk', p.stock === null ? '' : p.stock);
  put('sm', p.soldOutMessage === null ? '' : p.soldOutMessage);
  put('cn', p.safetyNet === undefined ? undefined : p.safetyNet ? '1' : '0');
  return pairs;
}

/** The limits as lua/setControls-3.lua keeps them: 'rate|burst|active', '' for none. */
export function encodeLimits(l: ControlLimits): string {
  return [l.maxRatePerSecond, l.maxBurst, l.maxActive].map((v) => (v === undefined ? '' : String(v))).join('|');
}

/** The limits kept with the controls (lua/setControls-3.lua lr lb la), unset ones left out. */
function limitsOf(rate: Value, burst: Value, active: Value): ControlLimits {
  const limits: ControlLimits = {};
  if (num(rate) !== null) limits.maxRatePerSecond = num(rate)!;
  if (num(burst) !== null) limits.maxBurst = num(burst)!;
  if (num(active) !== null) limits.maxActive = num(active)!;
  return limits;
}

/** lua/controls-1.lua: { now, cm, cx, cr, cb, ca, co, cs, cd, cc, cv, generation, ar, sk, sm, cn, lr, lb, la, kh, kn }. */
export function decodeControls(r: Reply): { controls: StoredControls; generation: Value } {
  const maxActive = num(r[5]);
  return {
    generation: r[11],
    controls: {
      now: Number(r[0]),
      mode: modeOf(r[1]),
      message: str(r[2]),
      admitRatePerSecond: num(r[3]),
      admitBurst: num(r[4]),
      maxActive: maxActive === null ? undefined : maxActive < 0 ? null : maxActive,
      opensAt: num(r[6]),
      shuffle: str(r[7]) === '1',
      drawSeed: str(r[8]),
      drawCommitment: str(r[9]),
      version: num(r[10]) ?? 0,
      adaptiveRate: num(r[12]),
      stock: num(r[13]),
      soldOutMessage: str(r[14]),
      safetyNet: flagOf(r[15]),
      limits: limitsOf(r[16], r[17], r[18]),
      cohortHead: str(r[19]),
      cohortLength: num(r[20]) ?? 0,
    },
  };
}

/** The field names of lua/setControls-3.lua's refusals, as the patch names them. */
const PATCH_FIELD: Readonly<Record<string, string>> = { opensAt: 'opensAt', shuffle: 'shuffle' };

/** lua/setControls-3.lua: { 1, version } or { 0, field, reason } (throws {@link WaitgateConfigError}). */
export function decodeSetControls(r: Reply): { version: number } {
  if (Number(r[0]) === 1) return { version: Number(r[1]) };
  const field = String(r[1]);
  throw new WaitgateConfigError(PATCH_FIELD[field] ?? field, String(r[2]));
}

/** lua/cohort-1.lua: { head, length, hash... } (a page of the cohort). */
export function decodeCohortPage(r: Reply[]): CohortPage {
  const [head, length, ...hashes] = r;
  return { head: head ? String(head) : null, length: Number(length ?? 0) || 0, hashes: hashes.map(String) };
}
