// The shop's operator dashboard: waitgate/dashboard at /ops/waitgate behind HTTP Basic auth
// (user `ops`, the password given). A sketch: in a real shop use your own operator sign-in.

import { createHash, timingSafeEqual } from 'node:crypto';
import { createDashboard } from 'waitgate/dashboard';

const sha256 = (text) => createHash('sha256').update(text).digest();

/**
 * The handlers to mount at `/ops/waitgate`: a Basic-auth challenge (401, so the browser asks
 * for the password), then the dashboard, whose `authorize` checks the same credentials.
 * @param {import('waitgate').WaitingQueue} queue
 * @param {{ password: string }} options
 * @returns {import('express').RequestHandler[]}
 */
export function opsDashboard(queue, { password }) {
  const expected = sha256(`ops:${password}`);
  /** @param {import('node:http').IncomingMessage} req */
  const isOps = (req) => {
    const encoded = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(req.headers.authorization ?? '')?.[1];
    // Hashes of equal length, compared in constant time: the password's length leaks nothing either.
    return encoded !== undefined && timingSafeEqual(sha256(Buffer.from(encoded, 'base64').toString('utf8')), expected);
  };
  /** @type {import('express').RequestHandler} */
  const challenge = (req, res, next) => {
    if (isOps(req)) return next();
    res
      .status(401)
      .set({ 'www-authenticate': 'Basic realm="waitgate ops", charset="UTF-8"', 'cache-control': 'no-store' })
      .type('text/plain')
      .send('Sign in as ops.');
  };
  return [challenge, createDashboard({ queues: [queue], authorize: isOps, title: 'Sneaker drop · waitgate' })];
}
