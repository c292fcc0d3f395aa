// The reader's own code in the Hono snippet: an auth middleware that sets c.var.user, and an order table.
import type { MiddlewareHandler } from 'hono';

export const authenticate: MiddlewareHandler<{ Variables: { user?: { id: string } } }> = async (_c, next) => next();

export const db = {
  async insertOrder(_row: { memberId: string; item?: string; tokenId: string }): Promise<void> {},
};
