// F8: an asynchronous failover loses acknowledged consumes, and the order table's
// UNIQUE(tokenId) is what keeps a token to one order (RELIABILITY.md I5; SPEC.md, "Outcomes
// that are unknown": "the last line of defence against a second order on one token is the
// order database").
//
// A primary with one replica (--replicaof). The claims and their orders are replicated
// (WAIT 1 says so). Then the replica is frozen (SIGSTOP) and its link cut on the primary
// (CLIENT KILL TYPE replica), so nothing written from now on can reach it — not even bytes
// already in a socket buffer, as a bare SIGSTOP would leave. The consumes are acknowledged by
// the primary (WAIT 1 now says 0: unreplicated), the primary is kill -9'd, the replica thawed
// and promoted (REPLICAOF NO ONE), and a new client points at it.

import Database from 'libsql';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { EntryTokenError, RedisStore, WaitingQueue, type Claim } from '../../src/index.js';
import { parseInfo, waitUntil } from '../support/cluster.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { sleep, uniqueName } from '../support/unique.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function server(args: string[] = []): Promise<RedisServer> {
  const s = await startRedisServer(args);
  cleanups.push(() => s.stop());
  return s;
}

function connect(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  client.on('error', () => undefined); // the primary is killed on purpose
  cleanups.push(() => client.disconnect());
  return client;
}

/** The shop's order table (as examples/express-shop/db.mjs): token_id UNIQUE. */
function orderTable() {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, member_id TEXT NOT NULL, token_id TEXT NOT NULL UNIQUE)');
  const insert = db.prepare('INSERT INTO orders (member_id, token_id) VALUES (?, ?)');
  return {
    /** Places the order; false when the UNIQUE constraint refused a second order for the token. */
    place(memberId: string, tokenId: string): boolean {
      try {
        insert.run(memberId, tokenId);
        return true;
      } catch (error) {
        if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') return false;
        throw error;
      }
    },
    perToken: () => db.prepare('SELECT token_id AS tokenId, COUNT(*) AS n FROM orders GROUP BY token_id').all() as Array<{ tokenId: string; n: number }>,
    count: () => (db.prepare('SELECT COUNT(*) AS n FROM orders').get() as { n: number }).n,
  };
}

describe('F8: a failover to an asynchronous replica that missed the consumes', () => {
  it('shows the consumed tokens CLAIMED/READY again, and the order table refuses every second order', async () => {
    const MEMBERS = 20;
    const primary = await server();
    const replica = await server(['--replicaof', '127.0.0.1', String(primary.port)]);
    const primaryAdmin = connect(primary.url);
    const replicaAdmin = connect(replica.url);
    await waitUntil(
      'the replica to be in sync',
      async () => {
        const info = parseInfo(await replicaAdmin.info('replication'));
        return info.master_link_status === 'up' && info.master_sync_in_progress === '0';
      },
      15_000,
    );

    const client = connect(primary.url);
    const prefix = uniqueName('wg');
    const name = 'drop';
    const options = { name, admitBurst: MEMBERS, claimTtlSeconds: 1 };
    const queue = new WaitingQueue({ store: new RedisStore({ client, prefix }), ...options });
    const orders = orderTable();

    // Admitted, claimed, ordered: all of it on the replica too.
    const members = Array.from({ length: MEMBERS }, (_, i) => `member-${i}`);
    for (const m of members) await queue.enter(m);
    const admissions = await queue.admit();
    expect(admissions).toHaveLength(MEMBERS);
    const claims: Claim[] = [];
    for (const a of admissions) {
      const claim = await queue.claim(a.memberId, a.entryToken);
      expect(orders.place(a.memberId, claim.tokenId)).toBe(true);
      claims.push(claim);
    }
    expect(await client.call('WAIT', 1, 5000)).toBe(1);

    // Cut the replica off, then consume on the primary: acknowledged, never replicated.
    replica.signal('SIGSTOP');
    expect(Number(await primaryAdmin.client('KILL', 'TYPE', 'replica'))).toBe(1);
    await waitUntil('the primary to have no replica', async () => parseInfo(await primaryAdmin.info('replication')).connected_slaves === '0', 5000);
    for (const claim of claims) expect(await queue.consume(claim)).toBe(true);
    for (const m of members) expect(await queue.state(m)).toBe('NOT_ENTERED');
    expect(await client.call('WAIT', 1, 200)).toBe(0); // the optional witness: 0 replicas acknowledged the consumes
    const primaryOffset = Number(parseInfo(await primaryAdmin.info('replication')).master_repl_offset);

    // Fail over: the primary dies, the stale replica becomes the primary, the app follows it.
    primary.signal('SIGKILL');
    await waitUntil('the primary to be gone', async () => primary.process.exitCode !== null || primary.process.signalCode !== null, 5000);
    replica.signal('SIGCONT');
    expect(await replicaAdmin.call('REPLICAOF', 'NO', 'ONE')).toBe('OK');
    const promotedOffset = Number(parseInfo(await replicaAdmin.info('replication')).master_repl_offset);
    expect(promotedOffset).toBeLessThan(primaryOffset); // the replication stream it never got

    const client2 = connect(replica.url);
    const after = new WaitingQueue({ store: new RedisStore({ client: client2, prefix }), ...options });

    // Redis shows every consumed token alive again (CLAIMED under the old lease, or READY once it lapsed): the expected loss.
    let lostConsumes = 0;
    for (const a of admissions) {
      const p = await after.position(a.memberId);
      expect(p.status).toBe('READY');
      expect(p.entryToken).toBe(a.entryToken);
      lostConsumes++;
    }
    expect(lostConsumes).toBe(MEMBERS);

    // Each member tries a second order with the same token. Redis lets the claim through
    // (once the old lease lapsed); the order table refuses the order; the claim is released.
    let secondClaims = 0;
    let refused = 0;
    for (const a of admissions) {
      let claim: Claim | undefined;
      for (let attempt = 0; attempt < 100 && !claim; attempt++) {
        try {
          claim = await after.claim(a.memberId, a.entryToken);
        } catch (error) {
          if (!(error instanceof EntryTokenError) || error.code !== 'IN_USE') throw error;
          await sleep(50); // the lost consume's claim still holds its lease
        }
      }
      expect(claim).toBeDefined();
      secondClaims++;
      if (!orders.place(a.memberId, claim!.tokenId)) refused++;
      expect(await after.release(claim!)).toBe(true);
    }

    console.log(
      'F8 replica failover:',
      JSON.stringify({
        members: MEMBERS,
        lostConsumes,
        secondClaimsRedisAllowed: secondClaims,
        secondOrdersRefusedByDb: refused,
        replicationBytesLost: primaryOffset - promotedOffset,
      }),
    );
    expect(secondClaims).toBe(MEMBERS);
    expect(refused).toBe(MEMBERS);
    // I5 where it matters: one order per token.
    expect(orders.count()).toBe(MEMBERS);
    expect(orders.perToken().every((row) => row.n === 1)).toBe(true);
    expect(orders.perToken()).toHaveLength(MEMBERS);
  });
});
