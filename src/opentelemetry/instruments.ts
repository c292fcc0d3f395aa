// The instruments of waitgate/opentelemetry: names, units, attributes and bucket advice, in one place.

import { ValueType, type Meter } from '@opentelemetry/api';

/** Attribute on every point: the queue's name. */
export const QUEUE_NAME = 'waitgate.queue.name';
/** Attribute of the transition counters: which transition. */
export const TRANSITION = 'waitgate.transition';
/** Attribute of the store call histogram: the store operation (`enter`, `admit`, `stats`...). */
export const STORE_OPERATION = 'waitgate.store.operation';
/** Attribute of a failed store call: the error's code (`STORE_UNAVAILABLE`...), or its class name. */
export const ERROR_TYPE = 'error.type';

/**
 * The wait, in seconds: from a second (no real queue) to over an hour (a flash
 * sale's long tail). Percentiles interpolated between these are good to about a
 * bucket's width, which is what an operator reads off a wait chart.
 */
export const WAIT_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600];

/**
 * Store calls, in seconds: MemoryStore answers in microseconds, a Redis script in
 * about a millisecond on a LAN, and `operationTimeoutMs` (default 1 s) bounds the
 * rest; the top buckets show timeouts set longer.
 */
export const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * Creates every instrument on `meter`.
 *
 * Naming (OpenTelemetry semantic conventions, general/naming): lower-case,
 * dot-separated, UCUM units (`s`, annotations such as `{member}`), no `_total`
 * (Prometheus exporters add it to counters), pluralised only when counting discrete
 * things (`transitions`). Waiting, active and claimed members are three gauges, not
 * one with a state attribute: claimed members are also active, so a sum over a state
 * attribute would count them twice. They are gauges, not UpDownCounters, because
 * every instance reports the same queue-wide figure: summing them over instances is
 * wrong, and a gauge says so.
 */
export function createInstruments(meter: Meter) {
  return {
    // Queue-wide, read through one stats() call per collection (the same on every instance).
    waiting: meter.createObservableGauge('waitgate.queue.waiting', {
      description: 'Members waiting in the line (queue-wide).',
      unit: '{member}',
      valueType: ValueType.INT,
    }),
    active: meter.createObservableGauge('waitgate.queue.active', {
      description: 'Members holding a live token, claimed or not (queue-wide); what maxActive caps.',
      unit: '{member}',
      valueType: ValueType.INT,
    }),
    claimed: meter.createObservableGauge('waitgate.queue.claimed', {
      description: 'Members whose token is claimed by an in-flight request (queue-wide).',
      unit: '{member}',
      valueType: ValueType.INT,
    }),
    admissionRate: meter.createObservableGauge('waitgate.queue.admission.rate', {
      description: 'Admissions per second over the last few seconds (queue-wide).',
      unit: '{admission}/s',
      valueType: ValueType.DOUBLE,
    }),
    queueTransitions: meter.createObservableCounter('waitgate.queue.transitions', {
      description: 'Transitions since the queue began, kept in the store (queue-wide, the same on every instance), by waitgate.transition.',
      unit: '{transition}',
      valueType: ValueType.INT,
    }),
    // This instance's own work, from its events and its store calls (sum over instances).
    memberTransitions: meter.createCounter('waitgate.member.transitions', {
      description: 'Transitions made through this instance, by waitgate.transition.',
      unit: '{transition}',
      valueType: ValueType.INT,
    }),
    wait: meter.createHistogram('waitgate.queue.wait.duration', {
      description: 'How long each member admitted by this instance waited, from entering (or the scheduled opening) to admission.',
      unit: 's',
      valueType: ValueType.DOUBLE,
      advice: { explicitBucketBoundaries: WAIT_BUCKETS },
    }),
    storeCall: meter.createHistogram('waitgate.store.operation.duration', {
      description: 'Duration of each store call made by this instance, by waitgate.store.operation (with error.type when it failed).',
      unit: 's',
      valueType: ValueType.DOUBLE,
      advice: { explicitBucketBoundaries: STORE_BUCKETS },
    }),
  };
}

export type Instruments = ReturnType<typeof createInstruments>;
