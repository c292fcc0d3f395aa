// The fault proxy's link faults (test/support/fault-proxy.ts) under the mixed load of
// test/support/fault-load.ts, on both client libraries: a TCP reset of every connection, of
// one at a time, and a blackhole. Every call succeeds or fails with StoreUnavailableError
// within operationTimeoutMs; afterwards nothing acknowledged is lost or doubled. A file of its
// own (its own redis-server) so it runs beside test/faults/connection-faults.test.ts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultProxy } from '../support/fault-proxy.js';
import {
  ALL_SETUPS,
  DEFAULT_SETUPS,
  OPERATION_TIMEOUT_MS,
  expectInvariants,
  expectOnlyStoreUnavailable,
  expectResetBehaviour,
  runLoad,
  summary,
  useFaultServer,
} from '../support/fault-load.js';
import { sleep } from '../support/unique.js';

const fault = useFaultServer();

describe('link faults through the fault proxy', () => {
  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = await FaultProxy.start({ port: fault.server.port });
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it.each(ALL_SETUPS)('a TCP reset of every connection every 100 ms on $label: StoreUnavailableError or success, nothing lost or doubled', async (setup) => {
    let resets = 0;
    const r = await runLoad(fault.admin, setup, proxy.url, async () => void (resets += proxy.resetAll()), 100, 3000);
    const totals = await expectInvariants(fault.admin, r);
    expectOnlyStoreUnavailable(r);
    expectResetBehaviour(setup, r);
    expect(resets).toBeGreaterThan(10);
    expect(r.reconnects).toBeGreaterThan(10);
    expect(proxy.errors).toEqual([]);
    summary(`proxy RST, ${setup.label}`, r, totals);
  });

  it.each(DEFAULT_SETUPS)('a TCP reset of one connection at a time, every 30 ms, on $label: the other instances keep admitting meanwhile', async (setup) => {
    // While one instance reconnects to re-send a call whose reply was lost (ioredis), or its
    // caller retries (node-redis), the others go on (admitting too): a re-sent admit must
    // still be a repeat, not a second issue of its tokens.
    let resets = 0;
    const r = await runLoad(fault.admin, setup, proxy.url, async () => void (proxy.resetOne(resets++) || resets--), 30, 3000);
    const totals = await expectInvariants(fault.admin, r);
    expectOnlyStoreUnavailable(r);
    expect(resets).toBeGreaterThan(30);
    expect(proxy.errors).toEqual([]);
    summary(`proxy RST one at a time, ${setup.label}`, r, totals);
  });

  it.each(DEFAULT_SETUPS)('a 1.5 s blackhole on $label: calls fail within operationTimeoutMs, then everything recovers', async (setup) => {
    // One long blackhole in the middle of the run, started by the first "fault" call.
    let started = false;
    const r = await runLoad(
      fault.admin,
      setup,
      proxy.url,
      async () => {
        if (!started) {
          started = true;
          await sleep(500);
          void proxy.blackhole(1500);
        }
      },
      100,
      3000,
    );
    const totals = await expectInvariants(fault.admin, r);
    const failures = expectOnlyStoreUnavailable(r);
    expect(failures).toBeGreaterThan(0); // calls in the blackhole timed out...
    expect(r.slowestFailureMs).toBeLessThan(OPERATION_TIMEOUT_MS + 500); // ...within the bound, never hanging
    expect(proxy.errors).toEqual([]);
    summary(`proxy blackhole, ${setup.label}`, r, totals);
  });
});
