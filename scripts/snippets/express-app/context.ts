// What a snippet continuing the Express snippet of the README takes as given: its imports, app, queue, memberId and db.
import type { Express, Request } from 'express';
import type { WaitingQueue } from 'waitgate';
import type { MemberIdResolver } from 'waitgate/express';

declare global {
  const express: typeof import('express');
  const requireEntryToken: typeof import('waitgate/express').requireEntryToken;
  const app: Express;
  const queue: WaitingQueue;
  const memberId: MemberIdResolver<Request>;
  const db: { insertOrder(row: { memberId: string; item?: string; tokenId: string }): Promise<void> };
}
