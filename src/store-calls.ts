// Every store call of a queue: bounded by operationTimeoutMs, published on a diagnostics
// channel while someone subscribes, and the store's set-up checks on the first call.

import type * as DiagnosticsChannel from 'node:diagnostics_channel';
import type { QueueEvents } from './queue-events.js';
import type { Store, StoreWarning } from './store/store.js';
import { withTimeout } from './store/with-timeout.js';

/**
 * The `node:diagnostics_channel` channel on which every store call of every queue is
 * published once it settled (only while someone subscribes: no cost otherwise), as a
 * {@link StoreCallMessage}. `waitgate/opentelemetry` records its durations.
 */
export const STORE_CALL_CHANNEL = 'waitgate:store';

/** A message of {@link STORE_CALL_CHANNEL}. */
export interface StoreCallMessage<Queue = unknown> {
  /** The queue that called (a `WaitingQueue`). */
  queue: Queue;
  queueName: string;
  /** The store operation: enter, position, admit, claim, consume, release, leave, stats, queueSnapshot, touch, controls, setControls, inspect. */
  operation: string;
  /** From the call to its settling (or its timeout), ms. */
  durationMs: number;
  /** Set when the call failed. */
  error?: unknown;
}

/**
 * node:diagnostics_channel, looked up rather than imported, so that the core entry also loads
 * where it is missing (an Edge-like runtime; the channel is then off). Node has
 * `process.getBuiltinModule` from 20.16; before, waitgate/opentelemetry hands the module over.
 */
function builtinDiagnostics(): typeof DiagnosticsChannel | undefined {
  const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  try {
    return host?.getBuiltinModule?.('node:diagnostics_channel') as typeof DiagnosticsChannel | undefined;
  } catch {
    return undefined;
  }
}

let storeCalls = builtinDiagnostics()?.channel(STORE_CALL_CHANNEL);

/** For waitgate/opentelemetry, which imports the module itself: the channel even on a Node without getBuiltinModule. @internal */
export function useDiagnosticsChannel(diagnostics: typeof DiagnosticsChannel): void {
  storeCalls ??= diagnostics.channel(STORE_CALL_CHANNEL);
}

/** The store calls of one queue. */
export class StoreCalls {
  readonly #store: Store;
  readonly #queue: object;
  readonly #queueName: string;
  readonly #timeoutMs: number;
  readonly #events: QueueEvents;
  #checkedStore = false;

  constructor(store: Store, queue: object, queueName: string, timeoutMs: number, events: QueueEvents) {
    this.#store = store;
    this.#queue = queue;
    this.#queueName = queueName;
    this.#timeoutMs = timeoutMs;
    this.#events = events;
  }

  /** One store call, bounded by operationTimeoutMs; the first also runs the store's set-up checks. */
  call<T>(operation: string, run: (store: Store) => Promise<T>): Promise<T> {
    if (!this.#checkedStore) {
      this.#checkedStore = true;
      void this.#checkStore();
    }
    const calls = storeCalls;
    if (!calls?.hasSubscribers) return withTimeout(operation, this.#timeoutMs, () => run(this.#store));
    const started = performance.now();
    const publish = (error?: unknown) => {
      const message: StoreCallMessage = { queue: this.#queue, queueName: this.#queueName, operation, durationMs: performance.now() - started };
      if (error !== undefined) message.error = error;
      calls.publish(message);
    };
    return withTimeout(operation, this.#timeoutMs, () => run(this.#store)).then(
      (value) => {
        publish();
        return value;
      },
      (error: unknown) => {
        publish(error);
        throw error;
      },
    );
  }

  async #checkStore(): Promise<void> {
    const store = this.#store;
    if (!store.warnings) return;
    let warnings: StoreWarning[];
    try {
      warnings = await withTimeout('warnings', this.#timeoutMs, () => store.warnings!());
    } catch {
      this.#checkedStore = false; // the store is down; check again on a later call
      return;
    }
    for (const warning of warnings) this.#events.warn(warning);
  }
}
