// The load generators' HTTP client: keep-alive sockets on loopback to one port, a JSON body
// read back, never a throw (a failed request answers status 0 with the error).
// Used by the flash-crowd shoppers (bench/sim/shoppers.mjs) and the bot swarm (bench/sim/swarm.mjs).

import http from 'node:http';

/**
 * A client of `127.0.0.1:port` with at most `sockets` connections; requests beyond them
 * wait in the agent (`queued()`).
 */
export function createHttpClient({ port, sockets, timeoutMs = 30_000 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  let inFlight = 0;
  /** `{ status, headers, body }` (body: parsed JSON or null), or `{ status: 0, error }`. */
  function request(method, path, headers = {}, body = undefined) {
    return new Promise((resolve) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      inFlight++;
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
            inFlight--;
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
        inFlight--;
        resolve({ status: 0, error: error.message });
      });
      if (payload) req.write(payload);
      req.end();
    });
  }
  return {
    request,
    /** Requests sent and not yet answered (on a socket or queued). */
    inFlight: () => inFlight,
    /** Requests waiting in the agent for a socket. */
    queued: () => Object.values(agent.requests).reduce((a, list) => a + list.length, 0),
    destroy: () => agent.destroy(),
  };
}
