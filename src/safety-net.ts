// The safety net as an instance asks for it (SPEC §18): an enter carries a fresh token
// and this instance's rate, burst and cap when the store may let the member in at once.
// The store decides (lua/includes/safetyNet.lua, src/store/memory/safety-net.ts).

import type { QueueConfig } from './options.js';
import type { ControlsView, SafetyNetRequest } from './store/store.js';

/**
 * An enter carries a fresh token: in passthrough, or with the safety net on (the control,
 * else the option) at the last answer. The store uses it only while nobody waits: behind
 * a line, the member joins it (in a batch, at the cost of any other join).
 */
export function entersWithToken(config: Pick<QueueConfig, 'safetyNet'>, controls: ControlsView | undefined): boolean {
  return controls?.mode === 'passthrough' || (controls?.safetyNet ?? config.safetyNet);
}

/** What the store needs to judge an instant entry: the option, and the rate, burst and cap where the controls set none. */
export function safetyNetRequest(config: QueueConfig): SafetyNetRequest {
  return {
    option: config.safetyNet,
    ratePerSecond: config.admitRatePerSecond,
    burst: config.burstFollowsRate ? null : config.admitBurst,
    maxActive: config.maxActive,
  };
}
