// The behaviour a user relies on, driven over real HTTP against a server running in another
// runtime (Bun, Deno, Next.js): the queue routes under /api/queue, the guarded POST /api/orders,
// the member from x-member-id. The rows are those of test/http/adapter-suite.ts that a server in
// another process can show (that table drives the queue and its clock in process).

import { spawn, type ChildProcess } from 'node:child_process';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { privateKeyPem, signPass } from '../support/signing-keys.js';

export interface Server {
  url: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  close(): Promise<void>;
}

/** Spawns a server and resolves once its output matches `listening` (group 1: the port). */
export function startServer(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; listening: RegExp; timeoutMs?: number },
): Promise<Server> {
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const close = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      process.kill(-child.pid!, 'SIGTERM'); // the group: `next start` runs a child of its own
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => void close().then(() => reject(new Error(`${command} ${args.join(' ')} did not listen in time:\n${output}`))),
      options.timeoutMs ?? 30_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const port = options.listening.exec(output)?.[1];
      if (port) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${port}`, output: () => output, close });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} ${args.join(' ')} exited (${code}):\n${output}`));
    });
  });
}

interface ErrorBody {
  error: { code: string; message: string };
}

/** The kid the servers sign with when given WAITGATE_SIGNING_KEY (test/runtimes/servers/app.mjs, examples/nextjs). */
export const SIGNING_KID = 'main';

/**
 * The table. `testHeaders`: the server's order handler follows x-test-status and x-test-throw
 * (the Next.js example's handler is the shipped one: it always answers 201). `signingKey`: the
 * PEM the server was given as WAITGATE_SIGNING_KEY; GET /api/checkout then checks passes with
 * verifyEntryPass in that runtime.
 */
export function describeRuntime(name: string, server: () => Server, { testHeaders = true, signingKey = '' } = {}): void {
  describe(`runtime: ${name}`, () => {
    const call = (method: string, path: string, headers: Record<string, string> = {}) => fetch(server().url + path, { method, headers });
    let members = 0;
    /** A member admitted: entered, then polled until READY; its entry token. */
    const admitted = async () => {
      const member = `${name.replace(/\W/g, '-')}-${++members}`;
      expect((await call('POST', '/api/queue/enter', { 'x-member-id': member })).status).toBe(200);
      let token: string | null = null;
      await expect
        .poll(
          async () =>
            (token = ((await (await call('GET', '/api/queue/position', { 'x-member-id': member })).json()) as { entryToken: string | null }).entryToken),
          {
            timeout: 10_000,
            interval: 100,
          },
        )
        .toEqual(expect.any(String));
      return { member, token: token! };
    };
    const order = (member: string, token: string | undefined, extra: Record<string, string> = {}) =>
      call('POST', '/api/orders', { 'x-member-id': member, ...(token ? { 'x-entry-token': token } : {}), ...extra });
    const expectError = async (response: Response, status: number, code?: string) => {
      expect(response.status).toBe(status);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const body = (await response.json()) as ErrorBody;
      if (code) expect(body.error.code).toBe(code);
      expect(typeof body.error.message).toBe('string');
    };

    it('POST /enter answers 200 with the position, no-store, Retry-After while WAITING; 401 without a member', async () => {
      const response = await call('POST', '/api/queue/enter', { 'x-member-id': `${name}-first` });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const position = (await response.json()) as { status: string; pollingIntervalSeconds: number };
      expect(['WAITING', 'READY']).toContain(position.status);
      if (position.status === 'WAITING') expect(response.headers.get('retry-after')).toBe(String(position.pollingIntervalSeconds));
      await expectError(await call('POST', '/api/queue/enter'), 401);
    });

    it('an admitted member orders once with its token: 201, then the used token is refused (401 ENTRY_TOKEN_INVALID)', async () => {
      const { member, token } = await admitted();
      await expectError(await order(member, undefined), 401, 'ENTRY_TOKEN_MISSING');
      await expectError(await order('someone-else', token), 401, 'ENTRY_TOKEN_INVALID');
      const placed = await order(member, token);
      expect(placed.status).toBe(201);
      expect(((await placed.json()) as { tokenId: unknown }).tokenId).toEqual(expect.any(String));
      await expectError(await order(member, token), 401, 'ENTRY_TOKEN_INVALID');
    });

    it('DELETE /api/queue leaves: 204, and the member is no longer in line', async () => {
      const member = `${name}-leaver`;
      await call('POST', '/api/queue/enter', { 'x-member-id': member });
      expect((await call('DELETE', '/api/queue', { 'x-member-id': member })).status).toBe(204);
      const position = (await (await call('GET', '/api/queue/position', { 'x-member-id': member })).json()) as { status: string };
      expect(position.status).toBe('NOT_ENTERED');
    });

    if (signingKey) {
      it('verifyEntryPass in the runtime: the queue\'s pass is let through (unclaimed); forged, expired, other-queue and other-member passes are refused', async () => {
        const { member, token } = await admitted();
        const checkout = (memberId: string, pass?: string) =>
          call('GET', '/api/checkout', { 'x-member-id': memberId, ...(pass ? { 'x-entry-token': pass } : {}) });
        const through = await checkout(member, token);
        expect(through.status).toBe(200);
        expect(await through.json()).toMatchObject({ memberId: member });
        const claims = decodeJwt(token);
        const header = { alg: 'ES256', kid: SIGNING_KID };
        const now = Math.floor(Date.now() / 1000);
        const refused: Array<[string, string, string]> = [
          ['BAD_SIGNATURE', member, await signPass(privateKeyPem(), claims, header)],
          ['EXPIRED', member, await signPass(signingKey, { ...claims, iat: now - 900, nbf: now - 900, exp: now - 600 }, header)],
          ['WRONG_QUEUE', member, await signPass(signingKey, { ...claims, aud: 'other-queue' }, header)],
          ['WRONG_MEMBER', 'someone-else', token],
        ];
        for (const [reason, memberId, pass] of refused) {
          const response = await checkout(memberId, pass);
          expect(response.status, reason).toBe(401);
          expect(((await response.json()) as ErrorBody).error, reason).toEqual({ code: 'ENTRY_TOKEN_INVALID', message: expect.stringContaining(reason) });
        }
        await expectError(await checkout(member), 401, 'ENTRY_TOKEN_MISSING');
        expect((await order(member, token)).status).toBe(201); // checked, not claimed: the order still takes it
      });
    }

    if (testHeaders) {
      it('a non-2xx answer or a throw releases the token: it places the order afterwards', async () => {
        const { member, token } = await admitted();
        expect((await order(member, token, { 'x-test-status': '422' })).status).toBe(422);
        expect((await order(member, token, { 'x-test-throw': '1' })).status).toBe(500);
        expect((await order(member, token)).status).toBe(201);
        await expectError(await order(member, token), 401, 'ENTRY_TOKEN_INVALID');
      });
    }
  });
}
