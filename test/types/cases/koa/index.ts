// A user of waitgate/koa: ctx.state.entry is typed after the guard, and only there.
import Koa from 'koa';
import type { Entry } from '../../../../src/http/koa.js';
import { queueRoutes, requireEntryToken } from '../../../../src/http/koa.js';
import { MemoryStore, WaitingQueue } from '../../../../src/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assert = <T extends true>(_: T) => undefined;

interface AppState {
  user?: { id: string };
}
const queue = new WaitingQueue({ store: new MemoryStore() });
const app = new Koa<AppState>();
app.use(queueRoutes<AppState>(queue, { memberId: (ctx) => ctx.state.user?.id, prefix: '/queue' }));
const guard = requireEntryToken<AppState>(queue, { memberId: (ctx) => ctx.state.user?.id });
app.use(async (ctx, next) => {
  await guard(ctx as Parameters<typeof guard>[0], async () => undefined);
  await next();
});
const handler: Parameters<typeof guard>[0] extends infer C ? (ctx: C) => void : never = (ctx) => {
  assert<Equal<typeof ctx.state.entry, Entry | undefined>>(true);
  assert<Equal<typeof ctx.state.user, { id: string } | undefined>>(true);
};
void handler;
// Koa's own DefaultState is untouched: a plain middleware has no typed entry.
const plain: Koa.Middleware<AppState> = (ctx) => {
  // @ts-expect-error entry exists only on the guard's state
  void ctx.state.entry;
};
void plain;
