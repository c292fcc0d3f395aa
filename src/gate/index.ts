// waitgate/gate: the built-in gates of the queue routes' `gate` option (SPEC §17, docs/fair-entry.md).
// powGate needs the optional peer `altcha-lib`.

export { CHALLENGE_HEADER, powGate, type PowChallenge, type PowGateOptions } from './pow.js';
export { siteverifyGate, TURNSTILE_SITEVERIFY_URL, type SiteverifyChallenge, type SiteverifyGateOptions } from './siteverify.js';
export { requestHeader } from '../http/request-header.js';
export type { ChallengeBody, Gate, GateContext, GateDecision, GateVerdict } from '../http/gate.js';
