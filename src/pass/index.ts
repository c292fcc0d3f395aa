// waitgate/pass: verifies a signed entry pass anywhere (Node, Deno, Bun, Edge middleware,
// workers) with no store call. Web Crypto only: nothing here or below imports `node:`.

export { verifyEntryPass, type VerifyEntryPassOptions, type EntryPassResult, type EntryPassReason, type EntryPassKeys, type EntryPassJwk } from './verify.js';
