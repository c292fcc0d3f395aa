// The reader's own code in the Koa snippet: an auth middleware that sets ctx.state.user, and an order table.
import type { Middleware } from 'koa';

export const authenticate: Middleware<{ user?: { id: string } }> = async (_ctx, next) => next();

export const db = {
  async insertOrder(_row: { memberId: string; item?: string; tokenId: string }): Promise<void> {},
};
