// Pushes of admission steps, heard on a connection of their own. After each step that
// takes members off a line, lua/popAndIssue-8.lua PUBLISHes "<generation> <hm>" on the
// channel "<meta key>:moves" (hm: the members taken off it so far). A connection in
// subscribe mode can run no script, so the user gives RedisStore a second one
// (`subscriber`); one per store however many queues it serves, one channel per queue.

import type { HeadMovesWatch } from './store.js';

/** A push: the generation of the queue's state and its count of members taken off the line. */
export type MovesListener = (generation: string, headMoves: number) => void;

/** An ioredis `Redis` or `Cluster` used only to subscribe (`client.duplicate()`). */
export interface IoredisSubscriberLike {
  defineCommand(name: string, definition: object): void;
  subscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  /** 'ready' while connected (ioredis subscribes again after each reconnection). */
  status: string;
}

/** A node-redis client or cluster used only to subscribe (`client.duplicate()`, connected). */
export interface NodeRedisSubscriberLike {
  sendCommand(...args: never[]): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  /** true while connected (node-redis subscribes again after each reconnection). */
  readonly isReady?: boolean;
  readonly isOpen?: boolean;
}

export type SubscriberLike = IoredisSubscriberLike | NodeRedisSubscriberLike;

export function isSubscriber(value: unknown): value is SubscriberLike {
  const s = value as Partial<IoredisSubscriberLike & NodeRedisSubscriberLike> | null;
  return (
    typeof s === 'object' && s !== null && typeof s.subscribe === 'function' && (typeof s.defineCommand === 'function' || typeof s.sendCommand === 'function')
  );
}

const isIoredisSubscriber = (s: SubscriberLike): s is IoredisSubscriberLike => typeof (s as IoredisSubscriberLike).defineCommand === 'function';

/** The channel lua/popAndIssue-8.lua publishes a queue's moves on. */
export const movesChannel = (metaKey: string): string => `${metaKey}:moves`;

interface Channel {
  listeners: Set<MovesListener>;
  /** Set once SUBSCRIBE was answered: before, pushes may be missed. */
  subscribed: boolean;
}

/** The subscriptions of one RedisStore. */
export class HeadMovesChannels {
  readonly #subscriber: SubscriberLike;
  readonly #channels = new Map<string, Channel>();

  constructor(subscriber: SubscriberLike) {
    this.#subscriber = subscriber;
    if (isIoredisSubscriber(subscriber)) subscriber.on('message', (channel, message) => this.#heard(channel, message));
  }

  /** Subscribes to `channel` on first use; a failed SUBSCRIBE (an ACL without the channel) goes to `onError`, and the watch stays not live. */
  watch(channel: string, listener: MovesListener, onError: (error: Error) => void): HeadMovesWatch {
    let c = this.#channels.get(channel);
    if (!c) {
      const created: Channel = { listeners: new Set(), subscribed: false };
      this.#channels.set(channel, (c = created));
      const s = this.#subscriber;
      const subscribing = isIoredisSubscriber(s) ? s.subscribe(channel) : s.subscribe(channel, (message) => this.#heard(channel, message));
      subscribing.then(
        () => {
          created.subscribed = true;
        },
        (error: unknown) => {
          const reason = error instanceof Error ? error.message : String(error);
          onError(
            new Error(`waitgate: cannot subscribe to ${channel} on the RedisStore subscriber (${reason}); ranks are estimated from the pace of the head`),
          );
        },
      );
    }
    c.listeners.add(listener);
    const watched = c;
    return { live: () => watched.subscribed && this.#connected() };
  }

  #connected(): boolean {
    const s = this.#subscriber;
    if (isIoredisSubscriber(s)) return s.status === 'ready';
    return s.isReady ?? s.isOpen ?? false;
  }

  #heard(channel: string, message: string): void {
    const c = this.#channels.get(channel);
    if (!c) return;
    const space = message.lastIndexOf(' ');
    const headMoves = Number(message.slice(space + 1));
    if (space <= 0 || !Number.isSafeInteger(headMoves) || headMoves < 0) return; // not ours: ignored
    const generation = message.slice(0, space);
    for (const listener of c.listeners) listener(generation, headMoves);
  }
}
