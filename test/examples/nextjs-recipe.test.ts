// The Next.js recipe of the README (examples/nextjs: lib/waitgate.ts and two route handlers on
// waitgate/fetch), called as Next.js calls route handlers: with a real Request.
// `waitgate` resolves to src/ here, so no build is needed.

import { describe, expect, it, vi } from 'vitest';
import { WaitingQueue, type Position } from '../../src/index.js';

vi.mock('waitgate', () => import('../../src/index.js'));
vi.mock('waitgate/fetch', () => import('../../src/http/fetch.js'));

const queueRoute = await import('../../examples/nextjs/app/api/queue/[[...path]]/route.js');
const ordersRoute = await import('../../examples/nextjs/app/api/orders/route.js');
const { queue } = await import('../../examples/nextjs/lib/waitgate.js');

const origin = 'http://localhost:3000';
const member = { 'x-member-id': 'alice' };

const position = async () => (await (await queueRoute.GET(new Request(`${origin}/api/queue/position`, { headers: member }))).json()) as Position;
const order = (token: string) =>
  ordersRoute.POST(
    new Request(`${origin}/api/orders`, {
      method: 'POST',
      headers: { ...member, 'x-entry-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({ item: 'sneakers' }),
    }),
  );

describe('Next.js recipe (waitgate/fetch route handlers)', () => {
  it('enter, admitted, one order per token, leave', async () => {
    expect(queue).toBeInstanceOf(WaitingQueue); // the recipe runs on src/, as the mocks say
    const entered = await queueRoute.POST(new Request(`${origin}/api/queue/enter`, { method: 'POST', headers: member }));
    expect(entered.status).toBe(200);
    expect(entered.headers.get('cache-control')).toBe('no-store');
    expect(await entered.json()).toMatchObject({ status: expect.stringMatching(/WAITING|READY/) });

    // lib/waitgate.ts starts an admitter (10 a second): alice is admitted shortly.
    await expect.poll(async () => (await position()).status, { timeout: 5_000, interval: 50 }).toBe('READY');
    const { entryToken } = await position();

    const first = await order(entryToken!);
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ id: 1, memberId: 'alice', item: 'sneakers', tokenId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    // The body was read to the end (as Next.js does sending it): the token is consumed, then refused.
    await expect.poll(async () => (await position()).status).toBe('NOT_ENTERED');
    const second = await order(entryToken!);
    expect(second.status).toBe(401);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe('ENTRY_TOKEN_INVALID');

    await queueRoute.POST(new Request(`${origin}/api/queue/enter`, { method: 'POST', headers: member }));
    const left = await queueRoute.DELETE(new Request(`${origin}/api/queue`, { method: 'DELETE', headers: member }));
    expect(left.status).toBe(204);
    expect((await position()).status).toBe('NOT_ENTERED');
  });

  it('answers 401 without a member, 404 for what is not a queue route, and refuses an order without a token', async () => {
    expect((await queueRoute.POST(new Request(`${origin}/api/queue/enter`, { method: 'POST' }))).status).toBe(401);
    expect((await queueRoute.GET(new Request(`${origin}/api/queue/enter`, { headers: member }))).status).toBe(404);
    expect((await queueRoute.POST(new Request(`${origin}/api/queue/leave`, { method: 'POST', headers: member }))).status).toBe(404);
    const refused = await ordersRoute.POST(new Request(`${origin}/api/orders`, { method: 'POST', headers: member }));
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('ENTRY_TOKEN_MISSING');
  });
});
