// The reader's own code in the fetch (Next.js) snippets: the queue of lib/waitgate.ts, their auth, an order table.
import { MemoryStore, WaitingQueue } from 'waitgate';

export const queue = new WaitingQueue({ store: new MemoryStore(), name: 'orders' });

export function currentUser(_request: Request): { id: string } | undefined {
  return undefined;
}

export const db = {
  async insertOrder(_row: { memberId: string; item?: string; tokenId: string }): Promise<void> {},
};
