// POST /api/queue/enter, GET /api/queue/position, DELETE /api/queue. The optional catch-all
// [[...path]] also matches /api/queue itself (a plain [...path] would miss the DELETE).

import { queueRoutes } from 'waitgate/fetch';
import { currentUser, queue } from '../../../../lib/waitgate.ts';

const routes = queueRoutes(queue, { memberId: (request) => currentUser(request)?.id, prefix: '/api/queue' });
const handle = async (request: Request) => (await routes(request)) ?? new Response(null, { status: 404 });

export { handle as DELETE, handle as GET, handle as POST };
