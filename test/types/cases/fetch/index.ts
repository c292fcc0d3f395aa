// A user of waitgate/fetch: the handler's entry is typed (Entry; Entry | undefined only with
// fail-open), the request type and the runtime's further arguments flow through.
import type { Entry } from '../../../../src/http/fetch.js';
import { queueRoutes, withEntryToken } from '../../../../src/http/fetch.js';
import { MemoryStore, WaitingQueue } from '../../../../src/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assert = <T extends true>(_: T) => undefined;

const queue = new WaitingQueue({ store: new MemoryStore() });

// Next.js's NextRequest extends Request: memberId and the handler see the subclass.
declare class NextRequest extends Request {
  readonly cookies: { get(name: string): { value: string } | undefined };
}
const routes = queueRoutes(queue, { memberId: (req: NextRequest) => req.cookies.get('uid')?.value, prefix: '/api/queue' });
assert<Equal<typeof routes, (request: NextRequest) => Promise<Response | undefined>>>(true);

export const POST = withEntryToken(queue, { memberId: (req: NextRequest) => req.cookies.get('uid')?.value }, async (req, entry) => {
  assert<Equal<typeof req, NextRequest>>(true);
  assert<Equal<typeof entry, Entry>>(true);
  const consumed: boolean = await entry.consume();
  return Response.json({ consumed, tokenId: entry.tokenId }, { status: 201 });
});
assert<Equal<typeof POST, (request: NextRequest) => Promise<Response>>>(true);

// The runtime's further arguments (Next.js's { params }) are passed through, typed.
const byId = withEntryToken(queue, { memberId: () => 'a' }, async (_req, _entry, context: { params: Promise<{ id: string }> }) =>
  Response.json({ id: (await context.params).id }),
);
void byId(new Request('http://x.test'), { params: Promise.resolve({ id: '1' }) });
// @ts-expect-error the handler needs its context
void byId(new Request('http://x.test'));

// fail-open: the handler may run without an entry, and must say so.
withEntryToken(queue, { memberId: () => 'a', onStoreUnavailable: 'fail-open' }, async (_req, entry) => {
  assert<Equal<typeof entry, Entry | undefined>>(true);
  // @ts-expect-error entry may be undefined with fail-open
  void entry.tokenId;
  return new Response(null, { status: 204 });
});
withEntryToken(queue, { memberId: () => 'a', onStoreUnavailable: 'fail-closed' }, async (_req, entry) => {
  assert<Equal<typeof entry, Entry>>(true);
  return new Response();
});

// @ts-expect-error settle is 'auto' | 'manual'
withEntryToken(queue, { memberId: () => 'a', settle: 'sometimes' }, async () => new Response());
// @ts-expect-error memberId is required
queueRoutes(queue, { prefix: '/queue' });
// @ts-expect-error the handler answers a Response
withEntryToken(queue, { memberId: () => 'a' }, async () => ({ ok: true }));
void (async () => {
  const answered = await routes(new Request('http://x.test') as NextRequest);
  // @ts-expect-error undefined when the request is not one of the queue routes
  void answered.status;
})();
