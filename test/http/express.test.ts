// waitgate/express against the shared behaviour table, over real HTTP.

import type { AddressInfo } from 'node:net';
import express from 'express';
import { queueRoutes, requireEntryToken } from '../../src/http/express.js';
import { describeAdapter, memberOf, orderBehaviour, type AppFactory } from './adapter-suite.js';
import { describeEventStream } from './event-suite.js';
import { describeGate } from './gate-suite.js';

const expressApp: AppFactory = async ({ queue, settle, onStoreUnavailable, onOrder, routes }) => {
  const app = express();
  const memberId = (req: express.Request) => memberOf(req.headers);
  app.use('/queue', queueRoutes(queue, { memberId, ...routes }));
  app.post('/orders', requireEntryToken(queue, { memberId, settle, ...(onStoreUnavailable ? { onStoreUnavailable } : {}) }), async (req, res, next) => {
    try {
      onOrder(req.entry);
      const { status, body } = await orderBehaviour(req.headers, req.entry);
      res.status(status).json(body);
    } catch (error) {
      next(error);
    }
  });
  app.use((_error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).json({ error: 'handler failed' });
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => undefined),
  };
};

describeAdapter('express', expressApp);
describeGate('express', expressApp);
describeEventStream('express', expressApp);
