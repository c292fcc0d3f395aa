// The one set-up check of RedisStore: an evicting Redis loses waiting members.

import type { StoreWarning } from './store.js';

/**
 * Warnings for every master (one handle each: ScriptClient.masters) whose
 * `maxmemory-policy` is not `noeviction`. Reads `INFO memory`, which a least-privilege
 * ACL user may run; a NOPERM answer is a warning of its own. Rejects when a node is unreachable (the caller checks again later).
 */
export async function checkEvictionPolicy(nodes: ReadonlyArray<{ info(section: string): Promise<string> }>): Promise<StoreWarning[]> {
  const warnings: StoreWarning[] = [];
  for (const node of nodes) {
    let policy: string | undefined;
    try {
      policy = /^maxmemory_policy:(\S+)/m.exec(await node.info('memory'))?.[1];
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (!/NOPERM/i.test(reason)) throw error; // unreachable: check again later
      warnings.push({
        code: 'EVICTION_POLICY_UNKNOWN',
        message: `Could not read maxmemory-policy (INFO memory failed: ${reason}); waitgate needs noeviction.`,
      });
      continue;
    }
    if (policy !== undefined && policy !== 'noeviction') {
      warnings.push({
        code: 'EVICTION_POLICY',
        message: `Redis maxmemory-policy is "${policy}": Redis may evict waitgate's keys and lose waiting members. Set maxmemory-policy noeviction.`,
      });
    }
  }
  return warnings;
}
