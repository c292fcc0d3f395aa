// siteverifyGate: a token from a Turnstile, hCaptcha or reCAPTCHA-style widget, checked with the
// provider's siteverify endpoint (form POST of `secret` and `response`, JSON `{ success }` back).
// The URL and fetch are options, so that tests (and proxies) answer in the provider's place.

import { z } from 'zod';
import { parseStrict } from '../options.js';
import type { Gate, GateDecision } from '../http/gate.js';
import { requestHeader } from '../http/request-header.js';
import { CHALLENGE_HEADER } from './pow.js';

/** Cloudflare Turnstile's verify endpoint: the default `url`. */
export const TURNSTILE_SITEVERIFY_URL = 'https://challenges.cloudflare.com/turnstile/v0/siteverify';

/** The challenge of `siteverifyGate` in the 401 body's `error.challenge`: show the widget, send its token. */
export interface SiteverifyChallenge {
  kind: 'siteverify';
  /** The widget's public site key, when given in the options (the page renders the widget with it). */
  siteKey: string | null;
  /** Where the widget's token goes: this header of the next `POST <prefix>/enter`. */
  header: string;
}

/** Options of {@link siteverifyGate}. */
export interface SiteverifyGateOptions {
  /** The provider's secret key. */
  secret: string;
  /** The verify endpoint. Default Cloudflare Turnstile's; hCaptcha's is `https://api.hcaptcha.com/siteverify`. */
  url?: string;
  /** The fetch to call it with. Default the global `fetch`. */
  fetch?: typeof fetch;
  /** The widget's public site key, passed on in the challenge for the page. */
  siteKey?: string;
  /** What a token the provider refuses gets. Default `challenge` (show the widget again). */
  onInvalid?: 'challenge' | 'shadow';
  /** The longest wait for the provider, ms; past it (or on any failure to reach it) the member is challenged again. Default 5000. */
  timeoutMs?: number;
}

const schema = z.strictObject({
  secret: z.string().min(1),
  url: z.url().default(TURNSTILE_SITEVERIFY_URL),
  fetch: z.custom<typeof fetch>((f) => typeof f === 'function', 'must be a fetch function').optional(),
  siteKey: z.string().min(1).optional(),
  onInvalid: z.enum(['challenge', 'shadow']).default('challenge'),
  timeoutMs: z.number().int().min(1).default(5000),
});

/**
 * A gate checking a widget token (Turnstile, hCaptcha) sent in the `X-Waitgate-Challenge` header:
 * none, or one the provider could not be asked about, answers 401 CHALLENGE_REQUIRED with a
 * {@link SiteverifyChallenge}; one the provider confirms is allowed (the provider spends it: a
 * token works once).
 * @example
 * ```ts
 * const gate = siteverifyGate({ secret: process.env.TURNSTILE_SECRET!, siteKey: '0x4AAAA…' });
 * app.use('/queue', queueRoutes(queue, { memberId, gate }));
 * ```
 * @throws {@link index!WaitgateConfigError} for bad options.
 */
export function siteverifyGate(options: SiteverifyGateOptions): Gate<unknown> {
  const config = parseStrict(schema, options);
  const challenge: GateDecision = { verdict: 'challenge', challenge: { kind: 'siteverify', siteKey: config.siteKey ?? null, header: CHALLENGE_HEADER } };
  return async (req) => {
    const token = requestHeader(req, CHALLENGE_HEADER)?.trim();
    if (!token) return challenge;
    const verdict = await verify(token);
    if (verdict === 'unknown') return challenge;
    return verdict === 'valid' ? { verdict: 'allow' } : config.onInvalid === 'shadow' ? { verdict: 'shadow' } : challenge;
  };

  async function verify(token: string): Promise<'valid' | 'invalid' | 'unknown'> {
    try {
      const response = await (config.fetch ?? fetch)(config.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ secret: config.secret, response: token }).toString(),
        signal: AbortSignal.timeout(config.timeoutMs),
      });
      if (!response.ok) return 'unknown';
      const body = (await response.json()) as { success?: unknown };
      return body.success === true ? 'valid' : 'invalid';
    } catch {
      return 'unknown';
    }
  }
}
