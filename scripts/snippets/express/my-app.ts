// The reader's own code in the Express snippet: an auth middleware that sets req.user, and an order table.
import type { RequestHandler } from 'express';

export const authenticate: RequestHandler = (_req, _res, next) => next();

export const db = {
  async insertOrder(_row: { memberId: string; item?: string; tokenId: string }): Promise<void> {},
};
