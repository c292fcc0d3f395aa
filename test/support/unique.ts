// Unique names, so tests sharing one Redis never see each other's keys.

import { randomBytes } from 'node:crypto';

/** A queue name or key prefix no other test uses. */
export function uniqueName(label = 't'): string {
  return `${label}-${randomBytes(6).toString('hex')}`;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
