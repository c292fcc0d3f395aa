// The reader's own code in the Fastify snippet: an onRequest auth hook that sets request.user, and an order table.
import type { onRequestAsyncHookHandler } from 'fastify';

export const authenticate: onRequestAsyncHookHandler = async () => {};

export const db = {
  async insertOrder(_row: { memberId: string; item?: string; tokenId: string }): Promise<void> {},
};
