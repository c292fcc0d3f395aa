// What the dashboard snippets of docs/dashboard.md take as given: the app's queues and its own operator check.
import type { IncomingMessage } from 'node:http';
import type { WaitingQueue } from 'waitgate';

declare global {
  const queue: WaitingQueue;
  const ticketsQueue: WaitingQueue;
  /** The app's own check: a session, an SSO header set by its proxy, HTTP Basic... */
  function isOperator(req: IncomingMessage): boolean | Promise<boolean>;
}
