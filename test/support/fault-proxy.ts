// A small TCP fault proxy between ioredis and a redis-server the test owns. It parses
// enough RESP to know where each command and each reply ends, so that it can lose
// exactly one reply (after Redis executed the command) and then reset the client's
// socket, the way a dropped link does. It can also reset every connection at once, and
// blackhole the link (accept, forward nothing, deliver late) for a while.

import { connect, createServer, type Server, type Socket } from 'node:net';

/** One command as the proxy saw it on its way to Redis. */
export interface ProxiedCommand {
  /** Lower-case command name, e.g. `evalsha`. */
  readonly name: string;
  /** Every argument after the name, decoded as UTF-8. */
  readonly args: readonly string[];
}

export type CommandMatcher = (command: ProxiedCommand) => boolean;

/** Matches EVAL/EVALSHA (and their `_RO` forms) of one script, by its source or its SHA1. */
export function isScript(script: { lua: string; sha1: string }): CommandMatcher {
  return ({ name, args }) =>
    ((name === 'eval' || name === 'eval_ro') && args[0] === script.lua) ||
    ((name === 'evalsha' || name === 'evalsha_ro') && args[0]?.toLowerCase() === script.sha1);
}

/** A live count of commands matching a matcher that the proxy forwarded to Redis. */
export interface CommandCounter {
  readonly count: number;
  stop(): void;
}

interface Pending {
  command: ProxiedCommand;
  swallow: ((command: ProxiedCommand) => void) | null;
}

interface Link {
  client: Socket;
  server: Socket;
  pending: Pending[];
  requests: Buffer;
  replies: Buffer;
  heldToServer: Buffer[];
  heldToClient: Buffer[];
  closed: boolean;
}

export class FaultProxy {
  readonly port: number;
  readonly #server: Server;
  readonly #target: { host: string; port: number };
  readonly #links = new Set<Link>();
  readonly #counters = new Set<{ match: CommandMatcher; count: number }>();
  #armed: { match: CommandMatcher; resolve: (command: ProxiedCommand) => void } | null = null;
  #blackholed = false;
  #blackholeTimer: NodeJS.Timeout | undefined;
  /** Connections accepted since the proxy started (ioredis reconnects show here). */
  accepted = 0;
  /** Replies swallowed so far. */
  swallowed = 0;
  /** RESP the proxy could not parse (a test should expect none). */
  readonly errors: Error[] = [];

  private constructor(server: Server, port: number, target: { host: string; port: number }) {
    this.#server = server;
    this.port = port;
    this.#target = target;
  }

  /** Listens on a free loopback port and forwards to `target`. */
  static async start(target: { port: number; host?: string }): Promise<FaultProxy> {
    let proxy: FaultProxy | undefined;
    const server = createServer((socket) => {
      if (proxy) proxy.#accept(socket);
      else socket.destroy();
    });
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        if (typeof address === 'object' && address) resolve(address.port);
        else reject(new Error('fault proxy: no port'));
      });
    });
    proxy = new FaultProxy(server, port, { host: target.host ?? '127.0.0.1', port: target.port });
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Client connections open right now. */
  get connections(): number {
    return this.#links.size;
  }

  /**
   * Arms one fault: the next command matching `match` is forwarded and executed, but its
   * reply (and anything after it on that connection) is dropped and the client socket is
   * reset (RST). Resolves with the command once its reply was swallowed.
   */
  swallowNextReply(match: CommandMatcher): Promise<ProxiedCommand> {
    if (this.#armed) throw new Error('fault proxy: a swallow is already armed');
    return new Promise((resolve) => {
      this.#armed = { match, resolve };
    });
  }

  /** Resets (RST) every open client connection now, and closes its upstream side. */
  resetAll(): number {
    const links = [...this.#links];
    for (const link of links) this.#close(link, true);
    return links.length;
  }

  /**
   * Resets one open connection (the `n`-th, modulo how many are open; 0 is the oldest),
   * so that the other clients keep working meanwhile. Returns false when none is open.
   */
  resetOne(n = 0): boolean {
    const links = [...this.#links];
    const link = links[((n % links.length) + links.length) % links.length];
    if (!link) return false;
    this.#close(link, true);
    return true;
  }

  /**
   * Accepts connections but forwards nothing, either way, for `ms`; what was held is then
   * delivered (as TCP retransmission would after a blackhole is lifted). Resolves when it ends.
   */
  blackhole(ms: number): Promise<void> {
    this.startBlackhole();
    return new Promise((resolve) => {
      this.#blackholeTimer = setTimeout(() => {
        this.endBlackhole();
        resolve();
      }, ms);
    });
  }

  /** Starts a blackhole that lasts until {@link endBlackhole}. */
  startBlackhole(): void {
    this.#blackholed = true;
  }

  endBlackhole(): void {
    clearTimeout(this.#blackholeTimer);
    this.#blackholed = false;
    for (const link of this.#links) {
      if (link.heldToServer.length) link.server.write(Buffer.concat(link.heldToServer.splice(0)));
      if (link.heldToClient.length) link.client.write(Buffer.concat(link.heldToClient.splice(0)));
    }
  }

  /** Counts the forwarded commands matching `match` from now on. */
  count(match: CommandMatcher): CommandCounter {
    const entry = { match, count: 0 };
    this.#counters.add(entry);
    return {
      get count() {
        return entry.count;
      },
      stop: () => void this.#counters.delete(entry),
    };
  }

  /** Stops listening and resets every connection. */
  async close(): Promise<void> {
    clearTimeout(this.#blackholeTimer);
    this.#blackholed = false;
    this.resetAll();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    this.accepted++;
    client.setNoDelay(true);
    const server = connect(this.#target.port, this.#target.host);
    server.setNoDelay(true);
    const link: Link = { client, server, pending: [], requests: Buffer.alloc(0), replies: Buffer.alloc(0), heldToServer: [], heldToClient: [], closed: false };
    this.#links.add(link);
    client.on('data', (chunk: Buffer) => this.#guard(link, () => this.#onRequests(link, chunk)));
    server.on('data', (chunk: Buffer) => this.#guard(link, () => this.#onReplies(link, chunk)));
    const end = () => this.#close(link, false);
    client.on('error', end);
    server.on('error', end);
    client.on('close', end);
    server.on('close', end);
  }

  /** A parse failure closes the link and is kept for the test to see, never thrown into the event loop. */
  #guard(link: Link, run: () => void): void {
    try {
      run();
    } catch (error) {
      this.errors.push(error instanceof Error ? error : new Error(String(error)));
      this.#close(link, true);
    }
  }

  #onRequests(link: Link, chunk: Buffer): void {
    if (link.closed) return;
    const buffer = link.requests.length ? Buffer.concat([link.requests, chunk]) : chunk;
    let offset = 0;
    for (;;) {
      const parsed = parseCommand(buffer, offset);
      if (!parsed) break;
      const { command, end } = parsed;
      for (const counter of this.#counters) if (counter.match(command)) counter.count++;
      let swallow: Pending['swallow'] = null;
      if (this.#armed && this.#armed.match(command)) {
        swallow = this.#armed.resolve;
        this.#armed = null;
      }
      link.pending.push({ command, swallow });
      offset = end;
    }
    link.requests = buffer.subarray(offset);
    if (offset > 0) this.#send(link, 'server', buffer.subarray(0, offset));
  }

  #onReplies(link: Link, chunk: Buffer): void {
    if (link.closed) return;
    const buffer = link.replies.length ? Buffer.concat([link.replies, chunk]) : chunk;
    let offset = 0;
    for (;;) {
      const parsed = replyEnd(buffer, offset);
      if (parsed === null) break;
      if (parsed.kind === 'reply') {
        const pending = link.pending.shift();
        if (pending?.swallow) {
          // Forward the replies before this one, lose this one and the rest, then RST.
          if (offset > 0) this.#send(link, 'client', buffer.subarray(0, offset));
          this.swallowed++;
          this.#close(link, true);
          pending.swallow(pending.command);
          return;
        }
      }
      offset = parsed.end;
    }
    link.replies = buffer.subarray(offset);
    if (offset > 0) this.#send(link, 'client', buffer.subarray(0, offset));
  }

  #send(link: Link, to: 'server' | 'client', bytes: Buffer): void {
    if (this.#blackholed) (to === 'server' ? link.heldToServer : link.heldToClient).push(bytes);
    else (to === 'server' ? link.server : link.client).write(bytes);
  }

  #close(link: Link, reset: boolean): void {
    if (link.closed) return;
    link.closed = true;
    this.#links.delete(link);
    if (reset && !link.client.destroyed) link.client.resetAndDestroy();
    else link.client.destroy();
    link.server.destroy();
  }
}

const CR = 0x0d;

/** Index of the `\r\n` ending the line that starts at `from`, or -1 if it has not arrived. */
function lineEnd(buffer: Buffer, from: number): number {
  return buffer.indexOf('\r\n', from);
}

/** One request: a RESP array of bulk strings, or an inline command. Null until complete. */
export function parseCommand(buffer: Buffer, offset: number): { command: ProxiedCommand; end: number } | null {
  if (offset >= buffer.length) return null;
  if (buffer[offset] !== 0x2a /* * */) {
    const eol = lineEnd(buffer, offset);
    if (eol < 0) return null;
    const words = buffer.toString('utf8', offset, eol).trim().split(/\s+/).filter(Boolean);
    return { command: { name: (words[0] ?? '').toLowerCase(), args: words.slice(1) }, end: eol + 2 };
  }
  const eol = lineEnd(buffer, offset);
  if (eol < 0) return null;
  const count = Number(buffer.toString('latin1', offset + 1, eol));
  let at = eol + 2;
  const parts: string[] = [];
  for (let i = 0; i < count; i++) {
    if (at >= buffer.length) return null;
    if (buffer[at] !== 0x24 /* $ */) throw new Error(`fault proxy: expected a bulk string in a request, got ${String.fromCharCode(buffer[at]!)}`);
    const headerEnd = lineEnd(buffer, at);
    if (headerEnd < 0) return null;
    const length = Number(buffer.toString('latin1', at + 1, headerEnd));
    const start = headerEnd + 2;
    if (start + length + 2 > buffer.length) return null;
    parts.push(buffer.toString('utf8', start, start + length));
    at = start + length + 2;
  }
  return { command: { name: (parts[0] ?? '').toLowerCase(), args: parts.slice(1) }, end: at };
}

/**
 * The end of one complete RESP2/RESP3 value starting at `offset`, or null if it has not
 * fully arrived. `kind` tells a reply from out-of-band data (a RESP3 push or attribute),
 * which answers no command.
 */
export function replyEnd(buffer: Buffer, offset: number): { end: number; kind: 'reply' | 'out-of-band' } | null {
  const end = valueEnd(buffer, offset);
  if (end < 0) return null;
  const type = buffer[offset];
  return { end, kind: type === 0x3e /* > push */ || type === 0x7c /* | attribute */ ? 'out-of-band' : 'reply' };
}

/** End offset of the value at `offset`, or -1 if incomplete. */
function valueEnd(buffer: Buffer, offset: number): number {
  if (offset >= buffer.length) return -1;
  const type = String.fromCharCode(buffer[offset]!);
  const eol = lineEnd(buffer, offset);
  if (eol < 0) return -1;
  const after = eol + 2;
  switch (type) {
    case '+': // simple string
    case '-': // error
    case ':': // integer
    case '_': // RESP3 null
    case ',': // RESP3 double
    case '#': // RESP3 boolean
    case '(': // RESP3 big number
      return after;
    case '$': // bulk string ($-1 is null)
    case '!': // RESP3 bulk error
    case '=': {
      // RESP3 verbatim string
      const length = Number(buffer.toString('latin1', offset + 1, eol));
      if (length < 0) return after;
      return after + length + 2 <= buffer.length && buffer[after + length] === CR ? after + length + 2 : -1;
    }
    case '*': // array (*-1 is null)
    case '~': // RESP3 set
    case '>': // RESP3 push
    case '%': // RESP3 map: count pairs
    case '|': {
      // RESP3 attribute: count pairs, then the value it annotates
      let count = Number(buffer.toString('latin1', offset + 1, eol));
      if (count < 0) return after;
      if (type === '%' || type === '|') count *= 2;
      let at = after;
      for (let i = 0; i < count; i++) {
        at = valueEnd(buffer, at);
        if (at < 0) return -1;
      }
      return at; // an attribute's annotated value follows as a value of its own
    }
    default:
      throw new Error(`fault proxy: unknown RESP type ${JSON.stringify(type)} in a reply`);
  }
}
