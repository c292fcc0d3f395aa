// POST /api/orders, behind the guard: it claims the X-Entry-Token and answers 401/409/503 itself.

import { withEntryToken } from 'waitgate/fetch';
import { currentUser, db, queue } from '../../../lib/waitgate.ts';

export const POST = withEntryToken(queue, { memberId: (request) => currentUser(request)?.id }, async (request, entry) => {
  const body = (await request.json().catch(() => ({}))) as { item?: unknown };
  const item = typeof body.item === 'string' ? body.item : 'sneakers';
  const order = await db.insertOrder({ memberId: entry.memberId, item, tokenId: entry.tokenId }); // token_id UNIQUE
  return Response.json(order, { status: 201 }); // 2xx: the token is consumed once this body is sent
});
