// A user of waitgate/express: req.entry is typed on every Express request.
import express from 'express';
import type { Entry } from '../../../../src/http/express.js';
import { queueRoutes, requireEntryToken } from '../../../../src/http/express.js';
import { MemoryStore, WaitingQueue } from '../../../../src/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assert = <T extends true>(_: T) => undefined;

const queue = new WaitingQueue({ store: new MemoryStore() });
const app = express();
app.use('/queue', queueRoutes(queue, { memberId: (req) => req.get('x-user') }));
app.post('/orders', requireEntryToken(queue, { memberId: () => 'a', settle: 'manual' }), async (req, res) => {
  assert<Equal<typeof req.entry, Entry | undefined>>(true);
  const consumed: boolean = await req.entry!.consume();
  const tokenId: string = req.entry!.tokenId;
  res.json({ consumed, tokenId });
});
// @ts-expect-error settle is 'auto' | 'manual'
requireEntryToken(queue, { memberId: () => 'a', settle: 'sometimes' });
// @ts-expect-error memberId is required
queueRoutes(queue, {});
