// GET /api/checkout: a page of the checkout that the Edge middleware (middleware.ts) let
// through with a valid pass. Nothing is claimed here; the order route claims the pass once.

import { currentUser } from '../../../lib/waitgate.ts';

export function GET(request: Request): Response {
  return Response.json({ memberId: currentUser(request)?.id, step: 'checkout' }, { headers: { 'cache-control': 'no-store' } });
}
