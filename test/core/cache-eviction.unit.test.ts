// takeOldest (core/cache-eviction.ts) keeps one iterator per map across calls; it must
// still answer the oldest entry whatever happened to the map in between.
import { takeOldest } from '../../core/cache-eviction.ts';

describe('takeOldest', () => {
  it('takes entries oldest first, a touched one (deleted and set again) as the newest', () => {
    const map = new Map([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    expect(takeOldest(map)).toEqual(['a', 1]);
    map.delete('b');
    map.set('b', 2);
    map.set('d', 4);
    expect(takeOldest(map)).toEqual(['c', 3]);
    expect(takeOldest(map)).toEqual(['b', 2]);
    expect([...map]).toEqual([['d', 4]]);
  });

  it('goes on after the map was emptied, cleared or rehashed', () => {
    const map = new Map<number, number>();
    expect(takeOldest(map)).toBeUndefined();
    map.set(1, 1);
    expect(takeOldest(map)).toEqual([1, 1]);
    expect(takeOldest(map)).toBeUndefined();
    map.set(2, 2);
    map.set(3, 3);
    map.clear();
    map.set(4, 4);
    expect(takeOldest(map)).toEqual([4, 4]);
    // Many more entries than the table held: it grows and rehashes under the iterator.
    for (let i = 10; i < 10_000; i++) map.set(i, i);
    for (let i = 10; i < 5_000; i++) map.delete(i);
    expect(takeOldest(map)).toEqual([5_000, 5_000]);
  });

  it('matches a plain oldest-first eviction over random use', () => {
    const map = new Map<number, number>();
    const order: number[] = [];
    let seed = 3;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % 100;
    for (let step = 0; step < 20_000; step++) {
      const key = random();
      const action = random() % 3;
      if (action === 0) {
        map.delete(key);
        map.set(key, step);
        if (order.includes(key)) order.splice(order.indexOf(key), 1);
        order.push(key);
      } else if (action === 1) {
        map.delete(key);
        if (order.includes(key)) order.splice(order.indexOf(key), 1);
      } else {
        const taken = takeOldest(map);
        expect(taken?.[0]).toBe(order.shift());
      }
    }
  });
});
