// Faults of the claimer, the order-API process that holds a claim (RELIABILITY.md):
//   F16 the claimer is killed -9 between claim and DB commit
//   F17 the claimer is SIGSTOPped past its lease, another claimer re-claims and orders
// The claimers are real child processes (test/support/fault-claimer.mjs) using the built
// package and the example shop's order DB, whose orders.token_id is UNIQUE.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'libsql';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore, WaitingQueue, type Claim } from '../../src/index.js';
import { processState } from '../support/fault-redis.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { COMPACT_JWS, signingWith } from '../support/signing-keys.js';
import { sleep, uniqueName } from '../support/unique.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CLAIMER = join(root, 'test/support/fault-claimer.mjs');
const LEASE_SECONDS = 1;
const PRODUCT = 3; // the example shop's 'Glacier slip-on', 40 in stock
/** A compact JWS (header.payload.signature, base64url): what a signed entry pass looks like. */

interface Reply {
  op: string;
  ok?: boolean;
  claim?: Claim;
  order?: { id: number; tokenId: string; memberId: string };
  value?: boolean;
  error?: string;
  pid?: number;
}

/** One claimer child process; replies come back in the order commands were sent. */
class Claimer {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #waiting: Array<(reply: Reply) => void> = [];
  #stderr = '';

  constructor(config: { url: string; name: string; db: string; signing?: Signing }) {
    this.child = spawn(process.execPath, [CLAIMER, JSON.stringify({ ...config, claimTtlSeconds: LEASE_SECONDS })], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.#stderr += chunk.toString()));
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.#waiting.shift()?.(JSON.parse(line) as Reply));
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Resolves with the next line the child prints (the first one is `ready`). */
  next(): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.#waiting.push(resolve);
      void this.exited.then(({ code, signal }) => reject(new Error(`claimer exited (${code ?? signal}) before replying:\n${this.#stderr}`)));
    });
  }

  /** Writes one command; its reply is the next line. Works while the child is stopped (the pipe holds it). */
  send(command: Record<string, unknown>): Promise<Reply> {
    const reply = this.next();
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
    return reply;
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

type Signing = ReturnType<typeof signingWith>;

let server: RedisServer;
let admin: Redis;
let dir: string;
const claimers: Claimer[] = [];

beforeAll(async () => {
  if (!existsSync(join(root, 'dist/index.js'))) throw new Error('the claimer processes import the built package: run `npm run build` first');
  server = await startRedisServer();
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  dir = mkdtempSync(join(tmpdir(), 'waitgate-claimers-'));
});
afterEach(async () => {
  for (const c of claimers.splice(0)) {
    c.kill('SIGCONT');
    c.kill('SIGKILL');
    await c.exited;
  }
});
afterAll(async () => {
  admin?.disconnect();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * A queue with one admitted member. With `signing` (SPEC §15) the queue and every claimer
 * process share the same keys, so the member's token is a signed pass all of them verify.
 */
async function setup(member: string, signing?: Signing) {
  const name = uniqueName('claimers');
  const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
  const queue = new WaitingQueue({
    store: new RedisStore({ client }),
    name,
    claimTtlSeconds: LEASE_SECONDS,
    entryTokenTtlSeconds: 120,
    ...(signing ? { signing } : {}),
  });
  await queue.enter(member);
  const [admission] = await queue.admit();
  expect(admission!.memberId).toBe(member);
  const db = join(dir, `${name}.db`);
  const claimer = async () => {
    const c = new Claimer({ url: server.url, name, db, ...(signing ? { signing } : {}) });
    claimers.push(c);
    expect(await c.next()).toMatchObject({ op: 'ready' });
    return c;
  };
  const orders = () => {
    const conn = new Database(db, { readonly: true });
    try {
      return conn.prepare('SELECT member_id AS memberId, token_id AS tokenId FROM orders').all() as Array<{ memberId: string; tokenId: string }>;
    } finally {
      conn.close();
    }
  };
  return { queue, client, token: admission!.entryToken, claimer, orders };
}

async function redisNow(): Promise<number> {
  const [s, us] = await admin.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

describe('F16: a claimer process killed -9 between claim and commit (signed passes)', () => {
  it('leaves the token claimed only until the lease ends; then it is READY again and the member orders once', async () => {
    // Signed passes (SPEC §15): the pass survives the claimer's death and is still used once.
    const { queue, client, token, claimer, orders } = await setup('alice', signingWith());
    expect(token).toMatch(COMPACT_JWS);
    const [a, b] = await Promise.all([claimer(), claimer()]);
    const claimed = await a.send({ op: 'claim', memberId: 'alice', token });
    expect(claimed).toMatchObject({ op: 'claim', ok: true });
    const claimA = claimed.claim!;

    a.kill('SIGKILL');
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(processState(a.pid)).toBeNull();

    // While the dead claimer's lease runs: the member is still READY (not lost), the token IN_USE.
    expect((await queue.position('alice')).status).toBe('READY');
    expect((await queue.stats()).claimed).toBe(1);
    await expect(queue.claim('alice', token)).rejects.toMatchObject({ code: 'IN_USE' });

    // Another order-API process retries the member's order, as a client would, until the token
    // can be claimed again; then it places the order with the same token, once.
    let inUse = 0;
    let claimB: Reply = await b.send({ op: 'claim', memberId: 'alice', token });
    const deadline = Date.now() + LEASE_SECONDS * 1000 + 3000;
    while (!claimB.ok && Date.now() < deadline) {
      expect(claimB.error).toBe('IN_USE');
      inUse++;
      await sleep(100);
      claimB = await b.send({ op: 'claim', memberId: 'alice', token });
    }
    expect(claimB.ok).toBe(true);
    const claimableAt = await redisNow();
    expect(claimableAt).toBeGreaterThanOrEqual(claimA.expiresAt); // not before the lease ended (Redis TIME)
    expect(claimB.claim!.tokenId).toBe(claimA.tokenId);
    expect(claimB.claim!.claimId).not.toBe(claimA.claimId);
    expect(await b.send({ op: 'commit', productId: PRODUCT })).toMatchObject({ ok: true, order: { memberId: 'alice', tokenId: claimA.tokenId } });
    expect(await b.send({ op: 'consume' })).toEqual({ op: 'consume', ok: true, value: true });

    expect(orders()).toEqual([{ memberId: 'alice', tokenId: claimA.tokenId }]);
    expect((await queue.position('alice')).status).toBe('NOT_ENTERED');
    expect(await queue.stats()).toMatchObject({ active: 0, claimed: 0 });
    await expect(queue.claim('alice', token)).rejects.toMatchObject({ code: 'INVALID' });
    console.log(
      `F16 ${JSON.stringify({ leaseMs: LEASE_SECONDS * 1000, claimToClaimableMs: claimableAt - (claimA.expiresAt - LEASE_SECONDS * 1000), inUseRetries: inUse })}`,
    );
    client.disconnect();
  });
});

describe('F17: a claimer paused past its lease', () => {
  it('wakes after another claimer ordered: its insert is refused by UNIQUE(token_id) and its consume answers false', async () => {
    // Signed passes (SPEC §15): the takeover and fencing are the same as for opaque tokens.
    const { queue, client, token, claimer, orders } = await setup('bob', signingWith());
    expect(token).toMatch(COMPACT_JWS);
    const a = await claimer();
    const b = await claimer();
    const claimA = (await a.send({ op: 'claim', memberId: 'bob', token })).claim!;
    expect(claimA).toBeDefined();

    a.kill('SIGSTOP');
    await sleep(50);
    expect(processState(a.pid)).toBe('T');
    // A was stopped mid-request: its commit and consume wait in its stdin.
    const aCommit = a.send({ op: 'commit', productId: PRODUCT });
    const aConsume = a.send({ op: 'consume' });

    // B retries until A's lease lapsed, then claims and orders.
    let claimB: Reply = await b.send({ op: 'claim', memberId: 'bob', token });
    expect(claimB).toMatchObject({ ok: false, error: 'IN_USE' });
    const deadline = Date.now() + LEASE_SECONDS * 1000 + 3000;
    while (!claimB.ok && Date.now() < deadline) {
      await sleep(100);
      claimB = await b.send({ op: 'claim', memberId: 'bob', token });
    }
    expect(claimB.ok).toBe(true);
    expect(claimB.claim!.claimId).not.toBe(claimA.claimId);
    expect(claimB.claim!.tokenId).toBe(claimA.tokenId);
    expect(await b.send({ op: 'commit', productId: PRODUCT })).toMatchObject({ ok: true });
    expect(await b.send({ op: 'consume' })).toMatchObject({ ok: true, value: true });
    expect(processState(a.pid)).toBe('T'); // A slept through all of it

    a.kill('SIGCONT');
    const [commitA, consumeA] = await Promise.all([aCommit, aConsume]);
    expect(commitA).toEqual({ op: 'commit', ok: false, error: 'AlreadyOrderedError' });
    expect(consumeA).toEqual({ op: 'consume', ok: true, value: false });

    expect(orders()).toEqual([{ memberId: 'bob', tokenId: claimA.tokenId }]);
    expect((await queue.position('bob')).status).toBe('NOT_ENTERED');
    expect(await queue.stats()).toMatchObject({ active: 0, claimed: 0 });
    expect(await a.send({ op: 'claim', memberId: 'bob', token })).toEqual({ op: 'claim', ok: false, error: 'INVALID' }); // used once
    console.log(`F17 ${JSON.stringify({ aCommit: commitA.error, aConsume: consumeA.value, ordersForToken: orders().length })}`);
    client.disconnect();
  });

  it("wakes before the other claimer commits: A's order stands but its consume answers false, and B's insert is refused, so the token still has one order", async () => {
    const { queue, client, token, claimer, orders } = await setup('carol');
    const a = await claimer();
    const b = await claimer();
    const claimA = (await a.send({ op: 'claim', memberId: 'carol', token })).claim!;
    a.kill('SIGSTOP');
    await sleep(50);
    expect(processState(a.pid)).toBe('T');
    const aCommit = a.send({ op: 'commit', productId: PRODUCT });
    const aConsume = a.send({ op: 'consume' });

    let claimB: Reply = await b.send({ op: 'claim', memberId: 'carol', token });
    const deadline = Date.now() + LEASE_SECONDS * 1000 + 3000;
    while (!claimB.ok && Date.now() < deadline) {
      await sleep(100);
      claimB = await b.send({ op: 'claim', memberId: 'carol', token });
    }
    expect(claimB.ok).toBe(true);
    expect(processState(a.pid)).toBe('T');

    // A wakes between B's claim and B's commit. Redis fencing cannot stop A's DB write...
    a.kill('SIGCONT');
    const [commitA, consumeA] = await Promise.all([aCommit, aConsume]);
    expect(commitA).toMatchObject({ ok: true, order: { memberId: 'carol', tokenId: claimA.tokenId } });
    expect(consumeA).toMatchObject({ ok: true, value: false }); // ...but it does refuse A's consume
    // ...and the DB's UNIQUE(token_id) refuses B's order: one order per token.
    expect(await b.send({ op: 'commit', productId: PRODUCT })).toEqual({ op: 'commit', ok: false, error: 'AlreadyOrderedError' });
    expect(orders()).toEqual([{ memberId: 'carol', tokenId: claimA.tokenId }]);
    // B settles the token it holds, as the example shop does on AlreadyOrderedError.
    expect(await b.send({ op: 'consume' })).toMatchObject({ ok: true, value: true });
    expect(await queue.stats()).toMatchObject({ active: 0, claimed: 0 });
    client.disconnect();
  });
});
