// waitgate/opentelemetry: records a WaitingQueue on an OpenTelemetry meter (gauges, counters, histograms).

import * as diagnostics from 'node:diagnostics_channel';
import { metrics, type Attributes, type BatchObservableCallback, type Meter } from '@opentelemetry/api';
import { z } from 'zod';
import { WaitgateConfigError, isWaitgateError } from '../errors.js';
import { parseStrict } from '../options.js';
import { STORE_CALL_CHANNEL, type Listener, type StoreCallMessage, type WaitingQueue, type WaitingQueueEvents } from '../waiting-queue.js';
import { ERROR_TYPE, QUEUE_NAME, STORE_OPERATION, TRANSITION, createInstruments } from './instruments.js';
import { VERSION } from './version.js';
import { useDiagnosticsChannel } from '../store-calls.js';

/** Options of {@link instrumentQueue}. */
export interface InstrumentQueueOptions {
  /**
   * The meter to record on. Default: `metrics.getMeter('waitgate', <waitgate's version>)` of the
   * global API, i.e. the global MeterProvider registered *before* this call (the API's
   * meters are not proxies: registered later, it is not seen). Without any registered,
   * the API's no-op meter: nothing is recorded, and the cost is the event listeners
   * and the store call messages (published only while subscribed).
   */
  meter?: Meter;
}

/** What {@link instrumentQueue} returns. */
export interface QueueInstrumentation {
  /** Stops recording: removes the event listeners, the observable callback and the channel subscription. Idempotent. */
  stop(): void;
}

const optionsSchema = z.strictObject({
  meter: z.custom<Meter>(isMeter, 'must be an OpenTelemetry Meter (from @opentelemetry/api)').optional(),
});

/**
 * Records `queue` on an OpenTelemetry meter until `stop()`:
 * - gauges of the members waiting, active and claimed and of the admission rate, and
 *   the queue-wide transition totals, all read through one `queue.stats()` call per
 *   collection (a failing call records nothing, and throws nothing);
 * - a counter of this instance's transitions (its events), by `waitgate.transition`;
 * - a histogram of the wait of the members this instance admits;
 * - a histogram of this instance's store call durations, by `waitgate.store.operation`.
 *
 * Every point carries `waitgate.queue.name`. The instruments are listed in docs/metrics.md.
 * Only `@opentelemetry/api` is used (an optional peer dependency): bring your own SDK.
 *
 * @param queue - the queue to record; instrument each instance (each app process) that runs one.
 * @param options - `meter`: defaults to the global API's `getMeter('waitgate', <waitgate's version>)`.
 * @returns a handle whose `stop()` ends the recording.
 * @throws `WaitgateConfigError` `CONFIG_INVALID` for an unknown option, a meter
 *   that is not one, or a queue that is not a WaitingQueue.
 *
 * @example
 * ```ts
 * const provider = new MeterProvider({ readers: [new PrometheusExporter({ preventServerStart: true })] });
 * const instrumentation = instrumentQueue(queue, { meter: provider.getMeter('waitgate') });
 * // on shutdown
 * instrumentation.stop();
 * ```
 */
export function instrumentQueue(queue: WaitingQueue, options: InstrumentQueueOptions = {}): QueueInstrumentation {
  const parsed = parseStrict(optionsSchema, options);
  if (!isQueue(queue)) throw new WaitgateConfigError('queue', 'must be a WaitingQueue');
  const meter = parsed.meter ?? metrics.getMeter('waitgate', VERSION);
  const instruments = createInstruments(meter);
  const base: Attributes = { [QUEUE_NAME]: queue.name };
  let stopped = false;

  // Queue-wide figures: one stats() call per collection feeds every observable.
  const observables = [instruments.waiting, instruments.active, instruments.claimed, instruments.admissionRate, instruments.queueTransitions];
  const observe: BatchObservableCallback = async (result) => {
    let stats;
    try {
      stats = await queue.stats();
    } catch {
      return; // the store is down: no point rather than a stale or zero one (the failed call shows in waitgate.store.operation.duration)
    }
    if (stopped) return;
    result.observe(instruments.waiting, stats.waiting, base);
    result.observe(instruments.active, stats.active, base);
    result.observe(instruments.claimed, stats.claimed, base);
    result.observe(instruments.admissionRate, stats.admittedPerSecond, base);
    if (stats.totals) {
      for (const [transition, value] of Object.entries(stats.totals)) {
        if (transition === 'shadowed') continue; // this instance's count, not a queue-wide transition
        result.observe(instruments.queueTransitions, value, { ...base, [TRANSITION]: transition });
      }
    }
  };
  meter.addBatchObservableCallback(observe, observables);

  // This instance's transitions: one counter with a `waitgate.transition` attribute, not
  // a counter per transition, so one query graphs the whole funnel (`sum by (transition)`),
  // a transition added later is a new attribute value rather than a new metric to find,
  // and the sum over transitions is still meaningful (this instance's state changes).
  const count = (transition: string, n = 1) => {
    if (n > 0) instruments.memberTransitions.add(n, { ...base, [TRANSITION]: transition });
  };
  const listeners: { [E in keyof WaitingQueueEvents]?: Listener<E> } = {
    entered: () => count('entered'),
    admitted: (members) => {
      count('admitted', members.length);
      for (const member of members) {
        const waited = member.waitedSeconds;
        if (typeof waited === 'number' && Number.isFinite(waited) && waited >= 0) instruments.wait.record(waited, base);
      }
    },
    abandoned: (members) => count('abandoned', members.length),
    claimed: () => count('claimed'),
    consumed: () => count('consumed'),
    released: () => count('released'),
    left: () => count('left'),
  };
  for (const [event, listener] of Object.entries(listeners)) queue.on(event as 'entered', listener as Listener<'entered'>);

  // Store calls, from the core's diagnostics channel (published only while subscribed).
  const onStoreCall = (message: unknown) => {
    if (!isStoreCall(message, queue)) return;
    const attributes: Attributes = { ...base, [STORE_OPERATION]: message.operation };
    if (message.error !== undefined) attributes[ERROR_TYPE] = errorType(message.error);
    instruments.storeCall.record(message.durationMs / 1000, attributes);
  };
  useDiagnosticsChannel(diagnostics);
  diagnostics.subscribe(STORE_CALL_CHANNEL, onStoreCall);

  return {
    stop() {
      if (stopped) return;
      stopped = true;
      meter.removeBatchObservableCallback(observe, observables);
      for (const [event, listener] of Object.entries(listeners)) queue.off(event as 'entered', listener as Listener<'entered'>);
      diagnostics.unsubscribe(STORE_CALL_CHANNEL, onStoreCall);
    },
  };
}

/** `error.type`: a waitgate error's stable code, else the error's class name, else `_OTHER` (the semantic conventions' fallback). */
function errorType(error: unknown): string {
  if (isWaitgateError(error)) return error.code;
  if (error instanceof Error && error.name) return error.name;
  return '_OTHER';
}

/** A {@link StoreCallMessage} of this queue (the channel is process-wide: every queue publishes on it). */
function isStoreCall(message: unknown, queue: WaitingQueue): message is StoreCallMessage {
  if (typeof message !== 'object' || message === null) return false;
  const m = message as Partial<StoreCallMessage>;
  return m.queue === queue && typeof m.operation === 'string' && typeof m.durationMs === 'number' && Number.isFinite(m.durationMs);
}

/** By shape, not instanceof: a meter from another copy of @opentelemetry/api is still a meter. */
function isMeter(value: unknown): value is Meter {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  return [
    'createCounter',
    'createHistogram',
    'createObservableGauge',
    'createObservableCounter',
    'addBatchObservableCallback',
    'removeBatchObservableCallback',
  ].every((method) => typeof m[method] === 'function');
}

/** By shape, not instanceof: the ESM and CJS builds each have their own WaitingQueue class. */
function isQueue(value: unknown): value is WaitingQueue {
  if (typeof value !== 'object' || value === null) return false;
  const q = value as Record<string, unknown>;
  return typeof q.name === 'string' && typeof q.on === 'function' && typeof q.off === 'function' && typeof q.stats === 'function';
}
