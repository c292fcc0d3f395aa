// Pushes of admission steps, heard on a connection of their own. After each step that
// takes members off a line, lua/popAndIssue-9.lua PUBLISHes "<generation> <hm>" on the
// channel "<meta key>:moves" (hm: the members taken off it so far). A connection in
// subscribe mode can run no script, so the user gives RedisStore a second one
// (`subscriber`); one however many queues it serves, one channel per queue. Stores given
// the same subscriber share its subscriptions and one set of listeners on it.

import { isIoredis } from './ioredis-client.js';
import type { HeadMovesListener, HeadMovesWatch } from './store.js';

/** A push as the channel carries it: the generation of the queue's state, and its count. */
export type HeadMovesPush = (generation: string, headMoves: number) => void;

/** An ioredis `Redis` or `Cluster` used only to subscribe (`client.duplicate()`). */
export interface IoredisSubscriberLike {
  defineCommand(name: string, definition: object): void;
  subscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'ready' | 'close' | 'reconnecting', listener: () => void): unknown;
  /** 'ready' while connected. */
  status: string;
}

/** A node-redis client or cluster used only to subscribe (`client.duplicate()`, connected). */
export interface NodeRedisSubscriberLike {
  sendCommand(...args: never[]): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  on(event: 'ready' | 'end' | 'reconnecting', listener: () => void): unknown;
  /** true while connected. */
  readonly isReady?: boolean;
  readonly isOpen?: boolean;
}

export type SubscriberLike = IoredisSubscriberLike | NodeRedisSubscriberLike;

export function isSubscriber(value: unknown): value is SubscriberLike {
  const s = value as Partial<IoredisSubscriberLike & NodeRedisSubscriberLike> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.subscribe === 'function' &&
    typeof s.on === 'function' &&
    (typeof s.defineCommand === 'function' || typeof s.sendCommand === 'function')
  );
}

const isIoredisSubscriber = (s: SubscriberLike): s is IoredisSubscriberLike => isIoredis(s);

/** The channel lua/popAndIssue-9.lua publishes a queue's moves on. */
export const headMovesChannel = (metaKey: string): string => `${metaKey}:moves`;

/** After a failed SUBSCRIBE, the next check of the watch subscribes again once this long has passed (ms). */
const RETRY_AFTER_MS = 5000;

interface Channel {
  /** Each listener with where its watch reports a failure to subscribe. */
  listeners: Map<HeadMovesPush, (error: Error) => void>;
  /**
   * 'subscribed' once SUBSCRIBE was answered on the connection in use; before, and from
   * a disconnection until the SUBSCRIBE sent again after it is answered, pushes may be missed.
   */
  state: 'subscribing' | 'subscribed' | 'failed';
  /** When the last SUBSCRIBE failed (performance.now()). */
  failedAt: number;
  /** A failure was reported and no SUBSCRIBE succeeded since: the next failures are not. */
  failing: boolean;
  /** One function per channel, so that subscribing again does not add a listener (node-redis keeps a set). */
  onMessage: (message: string) => void;
}

/** The subscriptions on each subscriber, however many stores were given it. */
const shared = new WeakMap<SubscriberLike, HeadMovesChannels>();

/** The subscriptions on one subscriber connection, for every RedisStore given it. */
export class HeadMovesChannels {
  readonly #subscriber: SubscriberLike;
  readonly #channels = new Map<string, Channel>();

  /**
   * The subscriptions on `subscriber`, shared: a connection given to many stores gets one
   * set of listeners (not one per store, which would pass its max listeners), and a
   * channel is subscribed once.
   */
  static of(subscriber: SubscriberLike): HeadMovesChannels {
    let channels = shared.get(subscriber);
    if (!channels) shared.set(subscriber, (channels = new HeadMovesChannels(subscriber)));
    return channels;
  }

  private constructor(subscriber: SubscriberLike) {
    this.#subscriber = subscriber;
    // A new connection has no subscriptions until SUBSCRIBE is answered on it: not live
    // from the disconnection, and subscribed again (not left to the client's own
    // re-subscription, whose answer cannot be awaited) once connected.
    const lost = () => {
      for (const c of this.#channels.values()) if (c.state === 'subscribed') c.state = 'subscribing';
    };
    const ready = () => {
      for (const [channel, c] of this.#channels) if (c.state !== 'failed') this.#subscribe(channel, c);
    };
    if (isIoredisSubscriber(subscriber)) {
      subscriber.on('message', (channel, message) => this.#channels.get(channel)?.onMessage(message));
      subscriber.on('close', lost);
      subscriber.on('reconnecting', lost);
      subscriber.on('ready', ready);
    } else {
      subscriber.on('end', lost);
      subscriber.on('reconnecting', lost);
      subscriber.on('ready', ready);
    }
  }

  /** Subscribes to `channel` on first use; a failed SUBSCRIBE (an ACL without the channel, Redis unreachable) goes to `onError` and is tried again later. */
  watch(channel: string, listener: HeadMovesPush, onError: (error: Error) => void): HeadMovesWatch {
    let c = this.#channels.get(channel);
    if (!c) {
      const created: Channel = {
        listeners: new Map(),
        state: 'subscribing',
        failedAt: 0,
        failing: false,
        onMessage: (message) => this.#heard(created, message),
      };
      this.#channels.set(channel, (c = created));
      this.#subscribe(channel, created);
    }
    c.listeners.set(listener, onError);
    const watched = c;
    return {
      live: () => {
        if (watched.state === 'failed' && performance.now() - watched.failedAt >= RETRY_AFTER_MS) this.#subscribe(channel, watched);
        return watched.state === 'subscribed' && this.#connected();
      },
      stop: () => void watched.listeners.delete(listener),
    };
  }

  #subscribe(channel: string, c: Channel): void {
    c.state = 'subscribing';
    const s = this.#subscriber;
    const subscribing = isIoredisSubscriber(s) ? s.subscribe(channel) : s.subscribe(channel, c.onMessage);
    subscribing.then(
      () => {
        if (c.state !== 'subscribing') return;
        c.state = 'subscribed';
        c.failing = false;
      },
      (error: unknown) => {
        c.state = 'failed';
        c.failedAt = performance.now();
        if (c.failing) return;
        c.failing = true;
        const reason = error instanceof Error ? error.message : String(error);
        const failure = new Error(
          `waitgate: cannot subscribe to ${channel} on the RedisStore subscriber (${reason}); ranks are estimated from the pace of the head until it can (tried again every ${RETRY_AFTER_MS / 1000} s)`,
        );
        for (const report of new Set(c.listeners.values())) report(failure);
      },
    );
  }

  #connected(): boolean {
    const s = this.#subscriber;
    if (isIoredisSubscriber(s)) return s.status === 'ready';
    return s.isReady ?? s.isOpen ?? false;
  }

  #heard(c: Channel, message: string): void {
    const space = message.lastIndexOf(' ');
    const headMoves = Number(message.slice(space + 1));
    if (space <= 0 || !Number.isSafeInteger(headMoves) || headMoves < 0) return; // not ours: ignored
    const generation = message.slice(0, space);
    for (const listener of c.listeners.keys()) listener(generation, headMoves);
  }
}

/** A listener of one queue's pushes, for {@link HeadMovesChannels.watch}: `listener` hears the counts of `generation()`. */
export function forGeneration(generation: () => string, listener: HeadMovesListener): HeadMovesPush {
  return (pushed, headMoves) => {
    if (pushed === generation()) listener(headMoves);
  };
}
