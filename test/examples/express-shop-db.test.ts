// The example shop's order DB (examples/express-shop/db.mjs): what it returns is what the
// shop sends as JSON, so its rows carry the selected columns and nothing the driver adds
// (libsql puts a `_metadata` property on the rows it returns); and several processes share one
// database file (SHOP_DB, the claimer fault tests), so a write waits for another's lock.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AlreadyOrderedError, listProducts, openDatabase, placeOrder } from '../../examples/express-shop/db.mjs';

const DB_MODULE = new URL('../../examples/express-shop/db.mjs', import.meta.url).href;
const opened: Array<{ close(): void }> = [];
const dirs: string[] = [];
afterEach(() => {
  opened.splice(0).forEach((db) => db.close());
  dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true }));
});
const open = (file = ':memory:') => {
  const db = openDatabase(file);
  opened.push(db);
  return db;
};

describe('example shop order DB', () => {
  it('returns an order with its columns only, and refuses a second order on one token', () => {
    const db = open();
    const order = placeOrder(db, { memberId: 'alice', productId: 1, tokenId: 't1' });
    expect(Object.keys(order).sort()).toEqual(['createdAt', 'id', 'memberId', 'productId', 'tokenId']);
    expect(JSON.parse(JSON.stringify(order))).toEqual({ id: 1, memberId: 'alice', productId: 1, tokenId: 't1', createdAt: expect.any(String) });
    expect(() => placeOrder(db, { memberId: 'alice', productId: 2, tokenId: 't1' })).toThrow(AlreadyOrderedError);
  });

  it('lists the products with their columns only', () => {
    const products = listProducts(open());
    expect(products.map((p: object) => Object.keys(p).sort())).toEqual(Array(3).fill(['id', 'name', 'priceCents', 'stock']));
    expect(products[0]).toEqual({ id: 1, name: 'Aurora runner', priceCents: 12900, stock: 25 });
  });

  it('waits for another process to release its write lock instead of failing with SQLITE_BUSY', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shop-db-'));
    dirs.push(dir);
    const file = join(dir, 'shop.db');
    const holder = open(file);
    holder.exec('BEGIN IMMEDIATE'); // the write lock, until COMMIT
    const script = `
      import { openDatabase, placeOrder } from ${JSON.stringify(DB_MODULE)};
      console.log('opening');
      const db = openDatabase(${JSON.stringify(file)});
      console.log(JSON.stringify(placeOrder(db, { memberId: 'bob', productId: 1, tokenId: 't2' })));
      db.close();`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const opening = new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.startsWith('opening')) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await opening;
    await new Promise((resolve) => setTimeout(resolve, 500)); // the child's writes meet the lock
    holder.exec('COMMIT');
    expect({ code: await exited, stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(stdout.split('\n')[1]!)).toMatchObject({ memberId: 'bob', productId: 1, tokenId: 't2' });
  });
});
