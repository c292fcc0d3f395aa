// The queue commands but watch and draw: status, inspect, and the writes (pause, resume,
// close, passthrough, set, schedule). Each opens one connection, does its calls, closes.

import type { ControlsPatch, QueueMode } from '../controls.js';
import type { MemberInspection } from '../types.js';
import type { Values } from './args.js';
import { connect, resolveTarget, type Connection } from './connect.js';
import { controlsView, type ControlsJson } from './controls-view.js';
import { isWaitgateError } from '../errors.js';
import { CommandFailure, UsageError } from './errors.js';
import { controlsText, inspectionText, statusText, type StatusStats } from './format.js';
import { print, printJson, type Io } from './io.js';
import { actorOf, modePatch, schedulePatch, setPatch } from './patch.js';
import type { CommandName } from './spec.js';

/** What `status --json` prints. */

export interface StatusJson {
  queue: string;
  prefix: string;
  /** The store's clock when the controls were read, epoch ms. */
  now: number;
  /** `admitRatePerSecond`: the rate shared through the store (pinned, or set by adaptive admission), else null: the instances' own option. */
  stats: StatusStats;
  controls: ControlsJson;
}

/** What a write command prints with --json. */
export interface ChangeJson {
  queue: string;
  /** The fields written. */
  patch: ControlsPatch;
  controls: ControlsJson;
}

const MODES: Partial<Record<CommandName, QueueMode>> = { pause: 'paused', resume: 'open', close: 'closed', passthrough: 'passthrough' };

/** Opens the connection, runs `work`, and closes it whatever happens. */
export async function withQueue<T>(
  values: Values,
  io: Io,
  command: string,
  work: (c: Connection) => Promise<T>,
  options?: { reconnect?: boolean },
): Promise<T> {
  const connection = await connect(resolveTarget(values, io.env, command), options);
  // The store's set-up warning (an evicting Redis) as one line of our own, not a Node warning.
  connection.queue.on('warning', (w) => io.stderr.write(`waitgate: warning: ${w.message}\n`));
  try {
    return await work(connection);
  } catch (error) {
    // ioredis's "Stream isn't writeable..." means the connection dropped: say that.
    const problem = connection.connectionProblem();
    throw problem && isWaitgateError(error) && error.code === 'STORE_UNAVAILABLE' ? new CommandFailure(problem, { cause: error }) : error;
  } finally {
    connection.close();
  }
}

/** Reads the figures and the controls: reads only. */
export async function readStatus(c: Connection): Promise<StatusJson> {
  const [stats, stored] = await Promise.all([c.queue.stats(), c.storedControls()]);
  const controls = controlsView(stored);
  return { queue: c.name, prefix: c.prefix, now: stored.now, stats: { ...stats, admitRatePerSecond: controls.admitRatePerSecond }, controls };
}

export function runStatus(values: Values, io: Io): Promise<void> {
  return withQueue(values, io, 'status', async (c) => {
    const status = await readStatus(c);
    if (values.json) printJson(io.stdout, status);
    else print(io.stdout, statusText(status.queue, status.prefix, status.stats, status.controls, status.now));
  });
}

export function runInspect(values: Values, args: string[], io: Io): Promise<void> {
  return withQueue(values, io, 'inspect', async (c) => {
    const found = await c.queue.inspect(args[0]!);
    // Field by field: whatever the inspection may grow, only these leave the process.
    const inspection: MemberInspection = {
      memberId: found.memberId,
      status: found.status,
      rank: found.rank,
      totalWaiting: found.totalWaiting,
      tokenExpiresAt: found.tokenExpiresAt,
      leaseExpiresAt: found.leaseExpiresAt,
      pickupBy: found.pickupBy,
      lastSeenAt: found.lastSeenAt,
      now: found.now,
    };
    if (values.json) printJson(io.stdout, inspection);
    else print(io.stdout, inspectionText(inspection));
  });
}

/** pause, resume, close, passthrough, set, schedule: validate, write only the given fields, print the controls. */
export async function runChange(name: CommandName, values: Values, io: Io): Promise<void> {
  const mode = MODES[name];
  // Validated before connecting: a bad value exits 2 without touching Redis.
  const patch = mode ? modePatch(mode, values, name) : name === 'set' ? setPatch(values, name) : schedulePatch(values, name);
  await withQueue(values, io, name, async (c) => {
    if (typeof patch.opensAt === 'number') {
      // setControls takes an opening in the past as "open now"; from an operator it is a mistake.
      const { now } = await c.storedControls();
      if (patch.opensAt <= now) {
        throw new UsageError(
          `--opens-at: ${new Date(patch.opensAt).toISOString()} is in the past (Redis time ${new Date(now).toISOString()}); to open now, use --cancel`,
          name,
        );
      }
    }
    // A queue nobody has used yet may be a typo in --queue or --prefix: refused, nothing
    // written, unless --create says it is meant (setting up a sale before anyone enters).
    const [before, stats] = await Promise.all([c.storedControls(), c.queue.stats()]);
    if (before.version === 0 && stats.totals.entered === 0 && stats.waiting === 0 && stats.active === 0 && values.create !== true) {
      throw new UsageError(
        `queue '${c.name}' (prefix '${c.prefix}') has no state: check --queue and --prefix, or pass --create to set up a queue nobody has used yet`,
        name,
      );
    }
    await c.queue.setControls(patch, { actor: actorOf(values) });
    const stored = await c.storedControls();
    const controls = controlsView(stored);
    if (values.json) printJson(io.stdout, { queue: c.name, patch, controls } satisfies ChangeJson);
    else print(io.stdout, controlsText(c.name, controls, stored.now));
  });
}
