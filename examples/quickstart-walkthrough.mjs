// The walkthrough both quickstarts run: enter, admit, claim, order, consume / release.
// examples/quickstart.mjs runs it on the memory store, quickstart-redis.mjs on Redis.

import { EntryTokenError, InvalidMemberIdError } from 'waitgate';

export const MEMBERS = ['alice', 'bob', 'carol', 'dave', 'erin'];

/** Walks a few members through the queue, printing each step. `queue` is a WaitingQueue with admitRatePerSecond 2. */
export async function walkThrough(queue) {
  const short = (token) => `${token.slice(0, 8)}…`;

  // A stand-in for the order table: tokenId is a UNIQUE column, the last guard against a second order per token.
  const orders = new Map();
  function insertOrder(memberId, tokenId, item) {
    if (orders.has(tokenId)) throw new Error('UNIQUE constraint failed: orders.token_id');
    orders.set(tokenId, { memberId, item });
  }

  console.log('1. Five members enter');
  for (const member of MEMBERS) {
    const p = await queue.enter(member);
    console.log(
      `  ${member}: ${p.status}, rank ${p.rank} of ${p.currentTotalWaitingCount}, ~${p.estimatedWaitSeconds} s, poll every ${p.pollingIntervalSeconds} s`,
    );
  }
  const again = await queue.enter('alice');
  console.log(`  alice enters again: still rank ${again.rank} (enter is idempotent)`);

  console.log('2. admit(): the bucket lets 2 through (admitBurst defaults to the rate)');
  for (const a of await queue.admit()) {
    console.log(`  ${a.memberId} admitted, token ${short(a.entryToken)} expires ${new Date(a.expiresAt).toISOString()}`);
  }
  const carol = await queue.position('carol');
  console.log(`  carol is now ${carol.status} at rank ${carol.rank}, ~${carol.estimatedWaitSeconds} s`);

  console.log('3. alice orders: claim -> commit with claim.tokenId -> consume');
  const alice = await queue.token('alice'); // what the position API hands the browser when READY
  const aliceClaim = await queue.claim('alice', alice.entryToken);
  console.log(`  claimed: claimId ${aliceClaim.claimId}, tokenId ${aliceClaim.tokenId}, lease until ${new Date(aliceClaim.expiresAt).toISOString()}`);
  insertOrder('alice', aliceClaim.tokenId, 'sneakers');
  console.log(`  order committed; consume -> ${await queue.consume(aliceClaim)}`);
  console.log(`  consume again (a retry) -> ${await queue.consume(aliceClaim)}`);
  try {
    await queue.claim('alice', alice.entryToken);
  } catch (error) {
    if (!(error instanceof EntryTokenError)) throw error;
    console.log(`  reusing the token: ${error.name} ${error.code} (HTTP 401)`);
  }

  console.log('4. bob orders, the order rolls back, bob retries');
  const bob = await queue.token('bob');
  const bobClaim = await queue.claim('bob', bob.entryToken);
  try {
    await queue.claim('bob', bob.entryToken); // a second tab, at the same time
  } catch (error) {
    if (!(error instanceof EntryTokenError)) throw error;
    console.log(`  a concurrent second claim: ${error.code} (HTTP 409)`);
  }
  console.log(`  payment declined, rollback; release -> ${await queue.release(bobClaim)}`);
  console.log(`  bob is still ${await queue.state('bob')}`);
  const bobRetry = await queue.claim('bob', bob.entryToken);
  insertOrder('bob', bobRetry.tokenId, 'hoodie');
  console.log(`  retry committed; consume -> ${await queue.consume(bobRetry)}`);

  console.log('5. Bad input is refused before any store call');
  for (const bad of ['', -1]) {
    try {
      await queue.enter(bad);
    } catch (error) {
      if (!(error instanceof InvalidMemberIdError)) throw error;
      console.log(`  enter(${JSON.stringify(bad)}): ${error.name} ${error.code} (HTTP 400)`);
    }
  }
  try {
    await queue.claim('carol', '');
  } catch (error) {
    if (!(error instanceof EntryTokenError)) throw error;
    console.log(`  claim with no token: ${error.code} (HTTP 401)`);
  }

  console.log('6. An admitter admits on a timer (safe on every instance: the rate is shared)');
  const admitter = queue.startAdmitter({ intervalMs: 100 });
  while ((await queue.state('carol')) !== 'READY') await new Promise((resolve) => setTimeout(resolve, 100));
  await admitter.stop();
  console.log('  carol is READY; admitter stopped');

  console.log('7. stats()');
  console.log(' ', await queue.stats());
  console.log(`  orders in the table: ${orders.size}`);
}
