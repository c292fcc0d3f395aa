// The last word of a bench child process to its parent (fork()), and the parent's wait for it.
//
// process.send() only queues a large message: the rest of it is written as the parent reads
// the pipe. A child that calls process.exit() right after loses what is still queued when
// the parent is slow to read (issue 23: `npm run simulate` ended with "bench/sim/shop.mjs
// exited (0) before "result""). sendAndExit waits for send()'s callback, called once the
// whole message is written.

import { fork } from 'node:child_process';

/**
 * Forks a bench child (`script`, its env on top of this one's) that talks over IPC, its
 * output on this one's; pushes it on `children` (killed at the end), returns it.
 */
export function forkChild(script, env, children) {
  const child = fork(script, { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(child);
  return child;
}

/** Sends `message` to the parent, then exits with `code` once all of it is written. */
export function sendAndExit(message, code = 0) {
  return new Promise((resolve) => {
    process.send(message, (error) => {
      if (error) console.error(`${process.argv[1]}: could not send "${message.type}": ${error.message}`);
      process.exit(error ? 1 : code);
      resolve();
    });
  });
}

/**
 * The first message of `type` from `child`; rejects if the child ends first. It waits for
 * 'close' (the IPC channel read to its end), not 'exit': the exit can be seen before the
 * last message is read.
 */
export function messageOf(child, type) {
  return new Promise((resolve, reject) => {
    const onMessage = (m) => m.type === type && (child.off('message', onMessage), resolve(m));
    child.on('message', onMessage);
    child.once('close', (code) => reject(new Error(`${child.spawnargs.join(' ')} exited (${code}) before "${type}"`)));
  });
}
