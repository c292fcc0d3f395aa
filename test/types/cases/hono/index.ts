// A user of waitgate/hono: c.get('entry') is typed after the guard, and only there; memberId
// receives the app's Context.
import { Hono, type Context } from 'hono';
import type { Entry } from '../../../../src/http/hono.js';
import { queueRoutes, requireEntryToken } from '../../../../src/http/hono.js';
import { MemoryStore, WaitingQueue } from '../../../../src/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assert = <T extends true>(_: T) => undefined;

type AppEnv = { Variables: { user?: { id: string } } };
const queue = new WaitingQueue({ store: new MemoryStore() });
const app = new Hono<AppEnv>();
const memberId = (c: Context<AppEnv>) => c.get('user')?.id;

app.route('/queue', queueRoutes(queue, { memberId }));
app.route('/plain', queueRoutes(queue, { memberId: (c) => c.req.header('x-user') }));

app.post('/orders', requireEntryToken(queue, { memberId, settle: 'manual' }), async (c) => {
  const entry = c.get('entry');
  assert<Equal<typeof entry, Entry>>(true);
  assert<Equal<typeof c.var.entry, Entry>>(true);
  const _user = c.get('user'); // the app's own variables stay typed
  assert<Equal<typeof _user, { id: string } | undefined>>(true);
  const consumed: boolean = await entry.consume();
  return c.json({ consumed, tokenId: entry.tokenId }, 201);
});

// fail-open: the entry may be missing, and the type says so.
app.post('/open', requireEntryToken(queue, { memberId, onStoreUnavailable: 'fail-open' }), (c) => {
  assert<Equal<typeof c.var.entry, Entry | undefined>>(true);
  // @ts-expect-error entry may be undefined with fail-open
  void c.var.entry.tokenId;
  return c.body(null, 204);
});

// No guard, no entry: Hono's own ContextVariableMap is left alone.
app.get('/other', (c) => {
  // @ts-expect-error entry is set only by the guard
  void c.get('entry');
  return c.text('ok');
});

// @ts-expect-error settle is 'auto' | 'manual'
requireEntryToken(queue, { memberId, settle: 'sometimes' });
// @ts-expect-error memberId receives a Hono Context, not a Request
requireEntryToken(queue, { memberId: (req: Request) => req.headers.get('x-user') });
// @ts-expect-error memberId is required
queueRoutes(queue, {});
