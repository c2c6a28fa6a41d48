// Taking the oldest entry of a Map used as a bounded cache (insertion order
// is age). `map.keys().next()` looks cheap, but a new iterator starts at the
// map's first slot and passes every slot deleted since the map last rehashed:
// in a full cache that evicts on every insert, thousands of them, tens of
// microseconds each time. One iterator per map walks on instead, passing
// each deleted slot once. It stays right because whatever it has passed was
// taken, so its next live entry is the oldest.

const walks = new WeakMap<Map<unknown, unknown>, MapIterator<[unknown, unknown]>>();

/** Removes the oldest entry of the map and answers it; undefined when the map is empty. */
export function takeOldest<K, V>(map: Map<K, V>): [K, V] | undefined {
  let walk = walks.get(map) as MapIterator<[K, V]> | undefined;
  let next = walk?.next();
  if (!next || next.done) {
    // A finished iterator never yields again, even for entries added later.
    walk = map.entries();
    walks.set(map, walk);
    next = walk.next();
  }
  if (next.done) return undefined;
  map.delete(next.value[0]);
  return next.value;
}
