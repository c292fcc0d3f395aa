// A claimer process for the claimer-fault tests (test/faults/claimers.test.ts): a stand-in
// for one order-API instance, which the test can kill -9 or SIGSTOP between steps.
// It uses the built package (`waitgate`, the package's self-reference, resolves to dist/;
// run `npm run build` first) and the example shop's order DB (UNIQUE token_id).
//
//   node test/support/fault-claimer.mjs '{"url":"redis://...","name":"q","claimTtlSeconds":1,"db":"/tmp/x.db"}'
// An optional "signing" in the config (the `signing` option, the same keys as the test's
// queue) makes the claimer's queue verify signed entry passes.
//
// Commands arrive on stdin, one JSON object a line, and are answered on stdout in order,
// one JSON line each:
//   {"op":"claim","memberId":"m","token":"..."}  -> {"op":"claim","ok":true,"claim":{...}} | {"op":"claim","ok":false,"error":"IN_USE"}
//   {"op":"commit","productId":3}                 -> {"op":"commit","ok":true,"order":{...}} | {"op":"commit","ok":false,"error":"AlreadyOrderedError"}
//   {"op":"consume"}                              -> {"op":"consume","ok":true,"value":false}
//   {"op":"exit"}
// The first line it prints is {"op":"ready","pid":...}.

import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { openDatabase, placeOrder } from '../../examples/express-shop/db.mjs';

const { RedisStore, WaitingQueue } = await import('waitgate');

const config = JSON.parse(process.argv[2]);
const client = new Redis(config.url, { maxRetriesPerRequest: 1 });
client.on('error', () => undefined);
const queue = new WaitingQueue({
  store: new RedisStore({ client }),
  name: config.name,
  claimTtlSeconds: config.claimTtlSeconds,
  operationTimeoutMs: 1000,
  ...(config.signing ? { signing: config.signing } : {}),
});
const db = openDatabase(config.db);
db.pragma('busy_timeout = 5000');
let claim = null;

const reply = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const failure = (error) => error?.code ?? error?.constructor?.name ?? String(error);

async function run(command) {
  switch (command.op) {
    case 'claim':
      try {
        claim = await queue.claim(command.memberId, command.token);
        return { ok: true, claim };
      } catch (error) {
        return { ok: false, error: failure(error) };
      }
    case 'commit':
      try {
        return { ok: true, order: placeOrder(db, { memberId: claim.memberId, productId: command.productId, tokenId: claim.tokenId }) };
      } catch (error) {
        return { ok: false, error: error.constructor.name };
      }
    case 'consume':
      try {
        return { ok: true, value: await queue.consume(claim) };
      } catch (error) {
        return { ok: false, error: failure(error) };
      }
    case 'exit':
      db.close();
      client.disconnect();
      return process.exit(0);
    default:
      return { ok: false, error: `unknown op ${command.op}` };
  }
}

await client.ping();
// Commands run one after another, in the order they arrived (a stopped process reads its backlog on SIGCONT).
let chain = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (line) => {
  const command = JSON.parse(line);
  chain = chain.then(async () => reply({ op: command.op, ...(await run(command)) }));
});
reply({ op: 'ready', pid: process.pid });
