// Flag values → a controls patch holding only the fields the operator gave, validated by
// the library's own setControls validation before anything is sent.

import { userInfo } from 'node:os';
import { parseControlsPatch, type ControlsPatch, type QueueMode } from '../controls.js';
import type { Values } from './args.js';
import { UsageError } from './errors.js';

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** A decimal number, or a UsageError naming the flag. */
export function parseNumber(flag: string, text: string, command: string): number {
  if (!DECIMAL.test(text.trim())) throw new UsageError(`--${flag}: not a number: '${text}'`, command);
  return Number(text);
}

/** The message fields of a patch: --message <text>, or --no-message (null). */
function messagePatch(values: Values, command: string): Pick<ControlsPatch, 'message'> {
  if (values['no-message'] === true) {
    if (values.message !== undefined) throw new UsageError('give --message or --no-message, not both', command);
    return { message: null };
  }
  return typeof values.message === 'string' ? { message: values.message } : {};
}

/** pause, resume, close, passthrough. */
export function modePatch(mode: QueueMode, values: Values, command: string): ControlsPatch {
  return parseControlsPatch({ mode, ...messagePatch(values, command) });
}

/** set: at least one of --rate, --burst, --max-active, --message/--no-message. */
export function setPatch(values: Values, command: string): ControlsPatch {
  const patch: ControlsPatch = { ...messagePatch(values, command) };
  // auto: give the rate back (to adaptive admission, or to the instances' own option).
  if (typeof values.rate === 'string') patch.admitRatePerSecond = values.rate.trim().toLowerCase() === 'auto' ? null : parseNumber('rate', values.rate, command);
  if (typeof values.burst === 'string') patch.admitBurst = parseNumber('burst', values.burst, command);
  const maxActive = values['max-active'];
  if (typeof maxActive === 'string') patch.maxActive = maxActive.trim().toLowerCase() === 'none' ? null : parseNumber('max-active', maxActive, command);
  const net = values['safety-net'];
  if (typeof net === 'string') {
    const on = net.trim().toLowerCase();
    if (on !== 'on' && on !== 'off') throw new UsageError(`--safety-net: give on or off, not '${net}'`, command);
    patch.safetyNet = on === 'on';
  }
  if (typeof values.stock === 'string') patch.stock = values.stock.trim().toLowerCase() === 'none' ? null : parseNumber('stock', values.stock, command);
  if (Object.keys(patch).length === 0) throw new UsageError('nothing to set: give --rate, --burst, --max-active, --safety-net, --stock or --message', command);
  return parseControlsPatch(patch);
}

// A date and time with a zone: a time without one would be read in this machine's zone.
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** An ISO 8601 time with a zone, or epoch milliseconds. */
export function parseTime(flag: string, text: string, command: string): number {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const ms = ISO_WITH_ZONE.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (Number.isNaN(ms))
    throw new UsageError(`--${flag}: give an ISO 8601 time with a zone (2026-12-24T10:00:00Z) or epoch milliseconds, not '${text}'`, command);
  return ms;
}

/** schedule: --opens-at [--shuffle | --no-shuffle], or --cancel. */
export function schedulePatch(values: Values, command: string): ControlsPatch {
  const opensAt = values['opens-at'];
  const cancel = values.cancel === true;
  if (cancel === (typeof opensAt === 'string')) throw new UsageError('give --opens-at <time> or --cancel', command);
  if (values.shuffle === true && values['no-shuffle'] === true) throw new UsageError('give --shuffle or --no-shuffle, not both', command);
  const patch: ControlsPatch = { ...messagePatch(values, command) };
  if (cancel) {
    if (values.shuffle === true) throw new UsageError('--shuffle needs --opens-at', command);
    patch.opensAt = null;
  } else patch.opensAt = parseTime('opens-at', opensAt as string, command);
  if (values.shuffle === true) patch.shuffle = true;
  if (values['no-shuffle'] === true) patch.shuffle = false;
  return parseControlsPatch(patch);
}

/** Who makes a change, for the controls log: --actor, else the OS user (null when it has none). */
export function actorOf(values: Values): string | undefined {
  if (typeof values.actor === 'string' && values.actor.trim() !== '') return values.actor.trim();
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined; // no user entry (a container's numeric uid)
  }
}
