// The load generators' HTTP client: keep-alive sockets on loopback to one port, a JSON body
// read back, never a throw (a failed request answers status 0 with the error). At most
// `sockets` requests are sent at once; the others wait here as closures, in two FIFO lanes
// (`urgent` first), not as ClientRequests in the agent: 50,000 of those pending made the
// bot swarm's process spend seconds in garbage collection.
// Used by the flash-crowd shoppers (bench/sim/shoppers.mjs) and the bot swarm (bench/sim/swarm.mjs).

import http from 'node:http';

/** A FIFO of waiting starts that does not shift (an index walks it; compacted as it empties). */
class Lane {
  #items = [];
  #head = 0;
  get length() {
    return this.#items.length - this.#head;
  }
  push(item) {
    this.#items.push(item);
  }
  shift() {
    const item = this.#items[this.#head++];
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}

/**
 * A client of `127.0.0.1:port` with at most `sockets` requests (and connections) at once;
 * requests beyond them wait (`queued()`), `urgent` ones before the others.
 */
export function createHttpClient({ port, sockets, timeoutMs = 30_000 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  let inFlight = 0;
  let sending = 0;
  const lanes = { urgent: new Lane(), normal: new Lane() };
  const next = () => {
    while (sending < sockets && (lanes.urgent.length > 0 || lanes.normal.length > 0)) {
      sending++;
      (lanes.urgent.length > 0 ? lanes.urgent : lanes.normal).shift()();
    }
  };
  /** `{ status, headers, body }` (body: parsed JSON or null), or `{ status: 0, error }`. */
  function request(method, path, { headers = {}, body = undefined, urgent = false } = {}) {
    inFlight++;
    return new Promise((resolve) => {
      (urgent ? lanes.urgent : lanes.normal).push(() => send(method, path, headers, body, resolve));
      next();
    }).then((answer) => {
      inFlight--;
      sending--;
      next();
      return answer;
    });
  }
  function send(method, path, headers, body, resolve) {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: { ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}), ...headers },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (data += c));
        res.on('end', () => {
          let json = null;
          try {
            json = data ? JSON.parse(data) : null;
          } catch {
            // not JSON: the body stays null
          }
          resolve({ status: res.statusCode, headers: res.headers, body: json });
        });
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', (error) => {
      resolve({ status: 0, error: error.message });
    });
    if (payload) req.write(payload);
    req.end();
  }
  return {
    request,
    /** Requests sent and not yet answered (on a socket or queued). */
    inFlight: () => inFlight,
    /** Requests waiting for a socket. */
    queued: () => lanes.urgent.length + lanes.normal.length,
    destroy: () => agent.destroy(),
  };
}
