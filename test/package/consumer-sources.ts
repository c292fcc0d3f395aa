// The sources the package test writes into its consumer project: export probes, a usage script, a type-check file.

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Writes the scripts the package test runs in the consumer project `dir`; `specifiers` are every subpath's import specifier. */
export async function writeConsumerSources(dir: string, root: string, specifiers: string[]): Promise<void> {
  await writeFile(join(dir, 'exports.mjs'), exportsProbe('import', root));
  await writeFile(join(dir, 'exports.cjs'), exportsProbe('require', root));
  await mkdir(join(dir, 'esm'));
  await mkdir(join(dir, 'cjs'));
  await writeFile(join(dir, 'esm', 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(join(dir, 'cjs', 'package.json'), JSON.stringify({}));
  await writeFile(join(dir, 'esm', 'use.js'), useScript('esm', root));
  await writeFile(join(dir, 'cjs', 'use.js'), useScript('cjs', root));
  const namespaces = specifiers.map((specifier, i) => `import * as subpath${i} from '${specifier}';`).join('\n');
  const touched = `export const subpaths = [${specifiers.map((_, i) => `subpath${i}`).join(', ')}];\n`;
  await writeFile(join(dir, 'check.mts'), `${namespaces}\n${touched}${apiCheck(root)}`);
  await writeFile(
    join(dir, 'check.cts'),
    `${namespaces}\nimport waitgateRequired = require('${root}');\n${touched}` +
      `export const requiredQueue: typeof waitgateRequired.WaitingQueue = waitgateRequired.WaitingQueue;\n${apiCheck(root)}`,
  );
}

/** Loads each specifier given as JSON in argv[2] and prints its named exports, and which shared names differ from the root's. */
function exportsProbe(how: 'import' | 'require', root: string): string {
  const load = how === 'import' ? 'await import(specifier)' : 'require(specifier)';
  const body = `
    const specifiers = JSON.parse(process.argv[2]);
    const rootModule = ${how === 'import' ? `await import('${root}')` : `require('${root}')`};
    const report = {};
    for (const specifier of specifiers) {
      const loaded = ${load};
      const keys = Object.keys(loaded).filter((key) => key !== 'default' && key !== '__esModule').sort();
      const notSharedWithRoot = keys.filter((key) => key in rootModule && loaded[key] !== rootModule[key]);
      report[specifier] = { keys, notSharedWithRoot };
    }
    process.stdout.write(JSON.stringify(report));
  `;
  return how === 'import' ? body : `(async () => {${body}})().catch((error) => { console.error(error); process.exit(1); });\n`;
}

/** Uses the root entry for real; `other` is the copy from the other module system. */
function useScript(system: 'esm' | 'cjs', root: string): string {
  const header =
    system === 'esm'
      ? `import * as own from '${root}';\nimport { createRequire } from 'node:module';\nconst other = createRequire(import.meta.url)('${root}');\n`
      : `const own = require('${root}');\n`;
  const body = `
    ${system === 'cjs' ? `const other = await import('${root}');` : ''}
    const { WaitingQueue, MemoryStore, WaitgateError, EntryTokenError, isWaitgateError } = own;
    const queue = new WaitingQueue({ store: new MemoryStore(), name: 'package-test', admitRatePerSecond: 10 });
    const entered = await queue.enter('member-1');
    const admitted = await queue.admit();
    const ready = await queue.position('member-1');
    const claim = await queue.claim('member-1', admitted[0].entryToken);
    const consumed = await queue.consume(claim);
    const after = await queue.position('member-1');
    const reclaimError = await queue.claim('member-1', admitted[0].entryToken).then(() => null, (error) => error);
    let configError = null;
    try {
      new WaitingQueue({ store: new MemoryStore(), nmae: 'typo' });
    } catch (error) {
      configError = error;
    }
    const otherQueue = new other.WaitingQueue({ store: new other.MemoryStore() });
    const otherError = await otherQueue.claim('member-1', 'A'.repeat(43)).then(() => null, (error) => error);
    process.stdout.write(JSON.stringify({
      entered: { status: entered.status, rank: entered.rank },
      admitted: admitted.map((admission) => admission.memberId),
      tokenLength: admitted[0].entryToken.length,
      ready: ready.status,
      claim: { memberId: claim.memberId, tokenIdIsString: typeof claim.tokenId === 'string' && claim.tokenId.length > 0 },
      consumed,
      after: after.status,
      reclaim: {
        name: reclaimError?.name,
        code: reclaimError?.code,
        instanceofEntryTokenError: reclaimError instanceof EntryTokenError,
        instanceofWaitgateError: reclaimError instanceof WaitgateError,
        isWaitgateError: isWaitgateError(reclaimError),
      },
      config: {
        name: configError?.name,
        code: configError?.code,
        instanceofWaitgateError: configError instanceof WaitgateError,
        isWaitgateError: isWaitgateError(configError),
      },
      otherCopy: { code: otherError?.code, isWaitgateError: isWaitgateError(otherError) },
      notAnError: isWaitgateError(new Error('plain')),
      ioredisLoaded: Object.keys(${system === 'esm' ? 'createRequire(import.meta.url)' : 'require'}.cache).some((file) => file.includes('/node_modules/ioredis/')),
    }));
  `;
  return system === 'esm' ? `${header}${body}` : `${header}(async () => {${body}})().catch((error) => { console.error(error); process.exit(1); });\n`;
}

/** Public API use that must type-check identically from ESM and CJS; each `@ts-expect-error` proves the types are not `any`. */
function apiCheck(root: string): string {
  return `
import { Cluster, Redis } from 'ioredis';
import {
  EntryTokenError,
  InvalidMemberIdError,
  MemoryStore,
  RedisStore,
  StoreUnavailableError,
  WaitgateConfigError,
  WaitgateError,
  WaitingQueue,
  isWaitgateError,
  type Admission,
  type AdmittedMember,
  type Claim,
  type EntryTokenErrorCode,
  type Position,
  type PositionStatus,
  type QueueStats,
  type Store,
  type WaitingQueueOptions,
} from '${root}';

const options: WaitingQueueOptions = {
  store: new MemoryStore({ now: () => Date.now() }),
  name: 'orders',
  admitRatePerSecond: 50,
  entryTokenTtlSeconds: 300,
};
const queue = new WaitingQueue(options);
export const redisQueue = new WaitingQueue({
  store: new RedisStore({ client: new Redis({ lazyConnect: true, maxRetriesPerRequest: 1 }), prefix: 'shop' }),
});
export const clusterStore: Store = new RedisStore({ client: new Cluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true }) });
// @ts-expect-error an unknown option is a type error too
export const typo = new WaitingQueue({ store: new MemoryStore(), nmae: 'orders' });
// @ts-expect-error the store is required
export const storeless = new WaitingQueue({});

export async function orderFlow(memberId: string | number): Promise<string | null> {
  const position: Position = await queue.enter(memberId);
  const status: PositionStatus = position.status;
  const rank: number | null = position.rank;
  const waitSeconds: number | null = position.estimatedWaitSeconds;
  const pollSeconds: number = position.pollingIntervalSeconds;
  // @ts-expect-error rank may be null
  const badRank: number = position.rank;
  void [status, rank, waitSeconds, pollSeconds, badRank];

  const admissions: Admission[] = await queue.admit();
  const live: { entryToken: string; expiresAt: number } | null = await queue.token(memberId);
  if (!live) return null;
  try {
    const claim: Claim = await queue.claim(memberId, live.entryToken);
    const tokenId: string = claim.tokenId;
    const committed: boolean = await queue.consume(claim);
    const released: boolean = await queue.release(claim);
    void [admissions, committed, released];
    return tokenId;
  } catch (error: unknown) {
    if (error instanceof EntryTokenError) {
      const code: EntryTokenErrorCode = error.code;
      void code;
    }
    if (isWaitgateError(error)) {
      const code: string = error.code;
      const base: WaitgateError = error;
      void [code, base];
    }
    if (error instanceof WaitgateConfigError || error instanceof InvalidMemberIdError || error instanceof StoreUnavailableError) {
      const message: string = error.message;
      void message;
    }
    throw error;
  }
}

export async function operate(): Promise<void> {
  const stats: QueueStats = await queue.stats();
  const waiting: number = stats.waiting;
  void waiting;
  queue.on('admitted', (members: AdmittedMember[]) => void members.map((member) => member.expiresAt));
  queue.on('error', (error: Error) => void error.message);
  // @ts-expect-error not an event of the queue
  queue.on('nope', () => undefined);
  const state: 'WAITING' | 'READY' | 'NOT_ENTERED' = await queue.state(1);
  const left: boolean = await queue.leave(1);
  const admitter = queue.startAdmitter({ intervalMs: 1000 });
  await admitter.stop();
  void [state, left];
}
`;
}
