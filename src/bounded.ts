// Caches that keep their newest entries: a Map or Set remembers insertion order, so the oldest
// entry is the first its iterator gives.

/** Deletes the oldest entries of `collection` (insertion order) until it holds at most `limit`. */
export function dropOldest(collection: Map<unknown, unknown> | Set<unknown>, limit: number): void {
  for (const key of collection.keys()) {
    if (collection.size <= limit) return;
    collection.delete(key);
  }
}
