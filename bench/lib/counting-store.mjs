// A Store that forwards every call to a real one and counts the calls by method:
// tells exactly which store calls (one Redis script each) the polls caused.

const METHODS = [
  'enter',
  'position',
  'admit',
  'claim',
  'consume',
  'release',
  'leave',
  'stats',
  'queueSnapshot',
  'acceptCurrentState',
  'warnings',
  'setControls',
  'controls',
  'touch',
  'watchHeadMoves',
];

export function countingStore(store) {
  const counts = Object.fromEntries(METHODS.map((m) => [m, 0]));
  const wrapper = { counts };
  for (const m of METHODS) {
    if (typeof store[m] !== 'function') continue;
    wrapper[m] = (...args) => {
      counts[m]++;
      return store[m](...args);
    };
  }
  wrapper.snapshotCounts = () => ({ ...counts });
  return wrapper;
}

export function diffCounts(before, after) {
  return Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)]));
}
