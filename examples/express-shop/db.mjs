// The shop's order database (SQLite through libsql, Turso's better-sqlite3-compatible driver,
// installed prebuilt): products with stock, and orders.
// orders.token_id is UNIQUE: the last guard against a second order on one entry token,
// should Redis ever lose a consume (e.g. an asynchronous failover).

import Database from 'libsql';

export const PRODUCTS = [
  { id: 1, name: 'Aurora runner', priceCents: 12900, stock: 25 },
  { id: 2, name: 'Midnight high-top', priceCents: 15900, stock: 10 },
  { id: 3, name: 'Glacier slip-on', priceCents: 8900, stock: 40 },
];

/** Opens (or creates) the database and seeds the products on first use. */
export function openDatabase(file = ':memory:') {
  // Wait up to 5 s for another connection's lock (several processes may share the file) rather
  // than fail at once with SQLITE_BUSY: better-sqlite3's default, which libsql's (0) is not.
  const db = new Database(file, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS products (
      id INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      price_cents INTEGER NOT NULL,
      stock INTEGER NOT NULL CHECK (stock >= 0)
    );
    CREATE TABLE IF NOT EXISTS orders (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      member_id TEXT NOT NULL,
      product_id INTEGER NOT NULL REFERENCES products(id),
      token_id TEXT NOT NULL UNIQUE,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
  `);
  const seed = db.prepare('INSERT OR IGNORE INTO products (id, name, price_cents, stock) VALUES (@id, @name, @priceCents, @stock)');
  db.transaction(() => PRODUCTS.forEach((p) => seed.run(p)))();
  return db;
}

// libsql adds a `_metadata` property ({ duration }) to the rows it returns (better-sqlite3
// does not): every row leaves this module through here, so the shop's JSON never carries it.
function plain(row) {
  if (row === undefined) return row;
  const { _metadata, ...rest } = row;
  return rest;
}

export class OutOfStockError extends Error {}
export class AlreadyOrderedError extends Error {}

/**
 * Places one order in one transaction: decrement the stock, insert the order with
 * the claim's tokenId. Throws OutOfStockError (rolled back) or AlreadyOrderedError
 * (this token already has an order: the UNIQUE constraint refused a second one).
 */
export function placeOrder(db, { memberId, productId, tokenId }) {
  return db.transaction(() => {
    const taken = db.prepare('UPDATE products SET stock = stock - 1 WHERE id = ? AND stock > 0').run(productId);
    if (taken.changes === 0) throw new OutOfStockError(`product ${productId} is sold out`);
    try {
      const { lastInsertRowid } = db.prepare('INSERT INTO orders (member_id, product_id, token_id) VALUES (?, ?, ?)').run(memberId, productId, tokenId);
      return plain(
        db
          .prepare('SELECT id, member_id AS memberId, product_id AS productId, token_id AS tokenId, created_at AS createdAt FROM orders WHERE id = ?')
          .get(lastInsertRowid),
      );
    } catch (error) {
      if (error?.code === 'SQLITE_CONSTRAINT_UNIQUE') throw new AlreadyOrderedError('this entry token already placed an order');
      throw error;
    }
  })();
}

export function listProducts(db) {
  return db.prepare('SELECT id, name, price_cents AS priceCents, stock FROM products ORDER BY id').all().map(plain);
}
