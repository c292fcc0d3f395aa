// Solves powGate's proof-of-work challenge (ALTCHA's v1 protocol) with Web Crypto's SHA-256, in
// browsers and Node 20 alike, without dependencies: the n ≤ maxnumber with SHA-256(salt + n) =
// challenge, sent back as ALTCHA's payload (base64 of its JSON) in the challenge's header.

/**
 * The challenge of powGate, as the 401 CHALLENGE_REQUIRED body carries it in `error.challenge`
 * (ALTCHA's v1 challenge, plus `kind` and `header`). The one declaration: `waitgate/gate` exports it too.
 */
export interface PowChallenge {
  kind: 'pow';
  algorithm: 'SHA-256';
  /** Hex SHA-256 of `salt + n` for the secret n. */
  challenge: string;
  salt: string;
  /** n is at most this: the difficulty (a solver tries maxnumber / 2 hashes on average). */
  maxnumber: number;
  signature: string;
  /** Where the solution goes: this request header (`x-waitgate-challenge`) of the next `POST <prefix>/enter`. */
  header: string;
}

/** Whether a 401 body's challenge is one this client can solve by itself. */
export function isPowChallenge(challenge: unknown): challenge is PowChallenge {
  const c = challenge as Partial<PowChallenge> | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    c.kind === 'pow' &&
    c.algorithm === 'SHA-256' &&
    typeof c.challenge === 'string' &&
    /^[0-9a-f]{64}$/.test(c.challenge) &&
    typeof c.salt === 'string' &&
    typeof c.signature === 'string' &&
    typeof c.header === 'string' &&
    Number.isSafeInteger(c.maxnumber) &&
    c.maxnumber! >= 0
  );
}

/**
 * Finds the number of a proof-of-work challenge and returns the value of its header: base64 of
 * `{ algorithm, challenge, number, salt, signature }`. About maxnumber / 2 SHA-256 digests.
 * @throws the signal's reason on abort; an Error when no number up to maxnumber fits.
 */
export async function solvePowChallenge(challenge: PowChallenge, signal?: AbortSignal): Promise<string> {
  const subtle = globalThis.crypto.subtle;
  const encoder = new TextEncoder();
  const target = new Uint8Array(32);
  for (let i = 0; i < 32; i++) target[i] = parseInt(challenge.challenge.slice(i * 2, i * 2 + 2), 16);
  for (let n = 0; n <= challenge.maxnumber; n++) {
    if (n % 1000 === 0) signal?.throwIfAborted();
    const digest = new Uint8Array(await subtle.digest('SHA-256', encoder.encode(challenge.salt + n)));
    let equal = true;
    for (let i = 0; i < 32 && equal; i++) equal = digest[i] === target[i];
    if (equal) {
      const { algorithm, challenge: hash, salt, signature } = challenge;
      return btoa(JSON.stringify({ algorithm, challenge: hash, number: n, salt, signature }));
    }
  }
  throw new Error('waitgate: the proof-of-work challenge has no solution up to its maxnumber');
}
