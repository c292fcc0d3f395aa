// The token guard used where a response has no body of its own (a Next.js middleware's or proxy's
// NextResponse.next()): it throws an error naming the misuse and releases the token, never consumes it.

import { describe, expect, it } from 'vitest';
import { MemoryStore, WaitingQueue } from '../../src/index.js';
import { withEntryToken } from '../../src/http/fetch.js';
import { PassThroughMisuseError } from '../../src/http/web.js';

describe('withEntryToken in a middleware pass-through', () => {
  it.each<Record<string, string>>([{ 'x-middleware-next': '1' }, { 'x-middleware-rewrite': 'http://shop.test/orders' }])(
    'throws naming the misuse, and the token stays usable (%j)',
    async (headers) => {
      const queue = new WaitingQueue({ store: new MemoryStore() });
      await queue.enter('alice');
      const token = (await queue.admit())[0]!.entryToken;
      const middleware = withEntryToken(queue, { memberId: () => 'alice' }, async () => new Response(null, { headers }));
      const error = await middleware(new Request('http://shop.test/orders', { method: 'POST', headers: { 'x-entry-token': token } })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PassThroughMisuseError);
      expect((error as Error).message).toMatch(/NextResponse\.next\(\).*verifyEntryPass/s);
      await expect.poll(async () => (await queue.stats()).claimed).toBe(0);
      expect(await queue.consume(await queue.claim('alice', token))).toBe(true);
    },
  );
});
