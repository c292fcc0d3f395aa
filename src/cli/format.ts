// Text output for people: numbers, durations, times, and the blocks of status, controls
// and inspect. (--json prints the objects themselves.)

import type { MemberInspection, QueueStats } from '../types.js';
import type { ControlsJson } from './controls-view.js';

/** `stats()` as the command shows it: the rate in force only when it is shared through the store. */
export type StatusStats = Omit<QueueStats, 'admitRatePerSecond'> & { admitRatePerSecond: number | null };

const INTEGER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const DECIMAL = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

export const int = (n: number): string => INTEGER.format(n);
export const dec = (n: number): string => DECIMAL.format(n);

/** 13ms, 4.2s, 1m 30s, 2h 5m, 3d 4h. */
export function duration(seconds: number): string {
  if (seconds < 1) return `${Math.max(0, Math.round(seconds * 1000))}ms`;
  if (seconds < 59.95) return `${dec(seconds)}s`;
  const s = Math.round(seconds);
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

/** An epoch-ms instant as ISO UTC, with how far it is from `now` (the store's clock). */
export function instant(ms: number | null, now: number): string {
  if (ms === null) return '-';
  const delta = (ms - now) / 1000;
  const relative = Math.abs(delta) < 0.5 ? 'now' : delta > 0 ? `in ${duration(delta)}` : `${duration(-delta)} ago`;
  return `${new Date(ms).toISOString()} (${relative})`;
}

/** Aligned `label  value` lines. */
export function table(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  return rows.map(([label, value]) => `${label.padEnd(width)}${value}`.trimEnd()).join('\n');
}

const INSTANCES = "instances' option";

/** Rows describing controls; `now` is the store's clock, for the opening's countdown. */
export function controlsRows(c: ControlsJson, now: number): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ['mode', c.mode],
    ['message', c.message === null ? '-' : JSON.stringify(c.message)],
    ['rate', c.admitRatePerSecond === null ? INSTANCES : `${dec(c.admitRatePerSecond)}/s`],
    ['burst', c.admitBurst === null ? INSTANCES : int(c.admitBurst)],
    ['max active', c.unset.includes('maxActive') ? INSTANCES : c.maxActive === null ? 'none' : int(c.maxActive)],
    ['opens at', c.opensAt === null ? '- (open now)' : instant(c.opensAt, now)],
    ['shuffle', c.shuffle ? 'yes' : 'no'],
    ['safety net', c.safetyNet === null ? INSTANCES : c.safetyNet ? 'on' : 'off'],
  ];
  if (c.stock !== null) rows.push(['stock', `${int(c.stock)} left`]);
  if (c.drawCommitment !== null) {
    rows.push(['commitment', c.drawCommitment]);
    rows.push(['seed', c.drawSeed ?? '(published at the opening)']);
    const cohort = c.cohortCommitment;
    rows.push(['cohort', cohort === null ? '(frozen at the opening)' : `${cohort.head} (${int(cohort.length)} entries)`]);
  }
  rows.push(['version', String(c.version)]);
  return rows;
}

/** The wait of the last 10 minutes, in one line. */
export function waitLine(w: QueueStats['waitSeconds'] | undefined): string {
  if (!w || w.count === 0) return '- (nobody admitted in the last 10 min)';
  return `p50 ${duration(w.p50)}  p90 ${duration(w.p90)}  max ${duration(w.max)}  (${int(w.count)} admitted in the last 10 min)`;
}

export function totalsLine(t: QueueStats['totals'] | undefined): string {
  if (!t) return '-';
  return `entered ${int(t.entered)}  admitted ${int(t.admitted)}  abandoned ${int(t.abandoned)}  consumed ${int(t.consumed)}  expired ${int(t.expired)}`;
}

/** Invite-code lanes (SPEC §17): each lane's share, members waiting and codes' uses left. */
export function lanesLine(lanes: QueueStats['lanes']): string {
  if (!lanes) return '-';
  const pct = (share: number) => `${Math.round(share * 1000) / 10}%`;
  return lanes
    .map((l) => `${l.name} ${pct(l.share)} ${int(l.waiting)} waiting${l.codeUsesLeft === null ? '' : `, ${int(l.codeUsesLeft)} code uses left`}`)
    .join('  ·  ');
}

/** active / max active (claimed), as far as the controls tell. */
export function activeLine(stats: StatusStats, c: ControlsJson): string {
  const cap = c.unset.includes('maxActive') ? ` / max: ${INSTANCES}` : c.maxActive === null ? '' : ` / ${int(c.maxActive)} max`;
  return `${int(stats.active)}${cap}  (${int(stats.claimed)} claimed)`;
}

export function statusText(queue: string, prefix: string, stats: StatusStats, c: ControlsJson, now: number): string {
  return table([
    ['queue', `${queue} (prefix ${prefix})`],
    ['waiting', int(stats.waiting)],
    ...(stats.lanes ? [['lanes', lanesLine(stats.lanes)] as [string, string]] : []),
    ['active', activeLine(stats, c)],
    ['admitted/s', dec(stats.admittedPerSecond)],
    ['totals', totalsLine(stats.totals)],
    ['wait', waitLine(stats.waitSeconds)],
    ...controlsRows(c, now),
  ]);
}

export function controlsText(queue: string, c: ControlsJson, now: number): string {
  return table([['queue', queue], ...controlsRows(c, now)]);
}

/** An inspection, field by field. It holds no token, and none is printed. */
export function inspectionText(i: MemberInspection): string {
  return table([
    ['member', i.memberId],
    ['status', i.status],
    ['rank', i.rank === null ? '-' : `${int(i.rank)} (0-based: 0 is next in line)`],
    ['waiting', int(i.totalWaiting)],
    ['token expires', instant(i.tokenExpiresAt, i.now)],
    ['lease expires', instant(i.leaseExpiresAt, i.now)],
    ['pick up by', instant(i.pickupBy, i.now)],
    ['last seen', instant(i.lastSeenAt, i.now)],
  ]);
}
