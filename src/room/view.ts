// What the waiting page shows for a position, in one locale: shared by the server's rendering
// (render.ts) and the page's script (page/room.ts, bundled), so both say the same thing.
// Numbers, durations and times go through Intl. Browser-safe: no Node import.

import type { Position } from '../types.js';
import type { RoomTexts } from './en.js';

/** The page's states; the sections of the page show for one of them each (`data-when`). */
export type RoomState = 'not-entered' | 'waiting' | 'paused' | 'closed' | 'countdown' | 'ready' | 'challenge' | 'refused' | 'held-elsewhere' | 'problem';

/** The texts filled into the page's `data-slot` elements, and the progress (0-100) of the bar. */
export interface RoomView {
  state: RoomState;
  /** Whether the member has a place number (not before a drawn opening). */
  ranked: boolean;
  progress: number;
  slots: Record<string, string>;
}

/** The state a position puts the page in. */
export function stateOf(position: Position): RoomState {
  if (position.status === 'READY') return 'ready';
  if (position.status !== 'WAITING') return 'not-entered';
  if (position.opensAt !== null) return 'countdown';
  if (position.queueMode === 'paused') return 'paused';
  if (position.queueMode === 'closed') return 'closed';
  return 'waiting';
}

/** Fills `{name}` placeholders. */
export function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
}

const integer = (locale: string, n: number) => new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(n);
const unit = (locale: string, n: number, name: 'second' | 'minute' | 'hour') =>
  new Intl.NumberFormat(locale, { style: 'unit', unit: name, unitDisplay: 'long', maximumFractionDigits: 0 }).format(n);

/** A duration in words for the locale: seconds under 90 s, minutes under 90 min, else hours and minutes. */
export function formatDuration(seconds: number, locale: string): string {
  if (seconds < 90) return unit(locale, Math.max(1, Math.ceil(seconds)), 'second');
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 90) return unit(locale, minutes, 'minute');
  const parts = [unit(locale, Math.floor(minutes / 60), 'hour')];
  if (minutes % 60 > 0) parts.push(unit(locale, minutes % 60, 'minute'));
  return new Intl.ListFormat(locale, { style: 'long', type: 'unit' }).format(parts);
}

/** A countdown as h:mm:ss (or m:ss), digits of the locale. */
export function formatCountdown(totalSeconds: number, locale: string): string {
  const two = new Intl.NumberFormat(locale, { minimumIntegerDigits: 2, useGrouping: false });
  const one = new Intl.NumberFormat(locale, { useGrouping: false });
  const s = Math.max(0, Math.ceil(totalSeconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const tail = `${two.format(minutes)}:${two.format(s % 60)}`;
  return hours > 0 ? `${one.format(hours)}:${tail}` : `${one.format(minutes)}:${two.format(s % 60)}`;
}

/** A time of day for the locale, in `timeZone` (default: where this runs), with the zone's name. */
export function formatTime(epochMs: number, locale: string, timeZone?: string): string {
  return new Intl.DateTimeFormat(locale, { hour: 'numeric', minute: '2-digit', timeZone, timeZoneName: 'short' }).format(epochMs);
}

/** The estimate in words. */
function waitText(position: Position, t: RoomTexts, locale: string): string {
  const seconds = position.estimatedWaitSeconds;
  if (typeof seconds === 'number') return seconds <= 1 ? t.anyMoment : fill(t.about, { duration: formatDuration(seconds, locale) });
  if (position.opensAt !== null) return t.atOpening;
  if (position.queueMode === 'paused' || position.queueMode === 'closed') return t.onHold;
  return t.unknown;
}

/**
 * The view of a position: `now` ticks the countdown, `timeZone` names the zone of the opening
 * time. Progress is the share of the line at or behind the member (the head: 100%).
 */
export function viewOf(position: Position, t: RoomTexts, locale: string, now: number, timeZone?: string): RoomView {
  const state = stateOf(position);
  const ranked = typeof position.rank === 'number';
  const rank = position.rank ?? 0;
  const total = Math.max(position.currentTotalWaitingCount, rank + 1);
  const wait = waitText(position, t, locale);
  const place = ranked ? integer(locale, rank + 1) : '';
  const notice = state === 'paused' || state === 'closed';
  const slots: Record<string, string> = {
    'place-line': ranked ? fill(t.place, { place }) : t.drawn,
    'rank-number': place,
    ahead: ranked ? integer(locale, rank) : t.notDrawn,
    wait,
    total: integer(locale, position.currentTotalWaitingCount),
    // The operator's banner, only while paused or closed (empty otherwise: nothing stale to read).
    'notice-title': notice ? (state === 'closed' ? t.closedTitle : t.pausedTitle) : '',
    'notice-message': notice ? (position.message ?? (state === 'closed' ? t.closedText : t.pausedText)) : '',
    'notice-hint': notice ? (state === 'closed' ? t.closedHint : t.pausedHint) : '',
    countdown: position.opensAt === null ? '' : formatCountdown((position.opensAt - now) / 1000, locale),
    'opens-at': position.opensAt === null ? '' : fill(t.opensAt, { time: formatTime(position.opensAt, locale, timeZone) }),
    expires: position.entryTokenExpiresAt === null ? '' : fill(t.readyText, { time: formatTime(position.entryTokenExpiresAt, locale, timeZone) }),
    // The odds with stock set (empty without: the line hides itself).
    odds: typeof position.likelyServed === 'boolean' && position.stockLeft !== null ? fill(position.likelyServed ? t.oddsLikely : t.oddsUnlikely, { stock: integer(locale, position.stockLeft) }) : '',
    announce: state === 'ready' ? t.readyTitle : ranked ? fill(t.announce, { place, wait }) : wait,
  };
  if (state === 'paused' || state === 'closed') slots.announce = `${slots['notice-title']}. ${slots['notice-message']}`;
  const progress = ranked ? Math.round((100 * (total - rank)) / total) : 0;
  return { state, ranked, progress: state === 'ready' ? 100 : progress, slots };
}
