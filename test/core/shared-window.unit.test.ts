// The shared request window's behaviour when its store fails and comes back:
// limiting goes on in process, and nothing counted meanwhile is lost.
import { SharedWindow, type CountStore, type StoredCount } from '../../core/identity/shared-window.ts';

/** A store in memory that can be made unreachable. */
function memoryStore() {
  const rows = new Map<string, StoredCount>();
  const state = { down: false, calls: 0 };
  const store: CountStore = async (counted, known, windowMs) => {
    state.calls++;
    if (state.down) throw new Error('connection refused');
    const now = Date.now();
    for (const [key, points] of counted) {
      const row = rows.get(key);
      if (!row || row.expire <= now) rows.set(key, { key, points, expire: now + windowMs });
      else row.points += points;
    }
    return known.flatMap((key) => (rows.has(key) ? [{ ...rows.get(key)! }] : []));
  };
  return { store, rows, state };
}

it('limits in process while the store is down, and hands every count over once it is back', async () => {
  const { store, rows, state } = memoryStore();
  const window = new SharedWindow('per-ip', 3, 60, store);
  state.down = true;
  expect(window.take('a').allowed).toBe(true);
  await window.sync();
  expect(state.calls).toBe(1);
  expect(window.take('a').remaining).toBe(1);
  expect(window.take('a').remaining).toBe(0);
  expect(window.take('a').allowed).toBe(false);
  expect(window.refused).toBe(1);
  state.down = false;
  await window.sync();
  // The refused request counts too: the store shows who kept knocking.
  expect(rows.get('a')!.points).toBe(4);
});

it('learns what other processes counted for a key it tracks, without traffic of its own', async () => {
  const { store } = memoryStore();
  const one = new SharedWindow('per-ip', 3, 60, store);
  const two = new SharedWindow('per-ip', 3, 60, store);
  one.take('k');
  await one.sync();
  two.take('k');
  two.take('k');
  await two.sync();
  await one.sync();
  expect(one.take('k').allowed).toBe(false);
  // Its window is the store's, not one of its own.
  expect(one.standing('k').resetSeconds).toBeLessThanOrEqual(60);
});
