// Sets of documents as ascending Int32Arrays (a document's number is its
// place in the index, newest first): what the in-memory index combines for
// and, or and not.

export const emptySet = new Int32Array(0);

export function intersect(a: Int32Array, b: Int32Array): Int32Array {
  if (a.length > b.length) [a, b] = [b, a];
  const out = new Int32Array(a.length);
  let n = 0;
  let j = 0;
  for (let i = 0; i < a.length && j < b.length; i++) {
    const value = a[i]!;
    // Gallop through the longer list: a rare word against a common one is a few binary searches.
    if (b[j]! < value) {
      let step = 1;
      while (j + step < b.length && b[j + step]! < value) step *= 2;
      let low = j + (step >> 1);
      let high = Math.min(j + step, b.length - 1);
      while (low < high) {
        const middle = (low + high) >> 1;
        if (b[middle]! < value) low = middle + 1;
        else high = middle;
      }
      j = low;
    }
    if (b[j] === value) out[n++] = value;
  }
  return out.subarray(0, n);
}

export function union(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(a.length + b.length);
  let n = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x <= y) i++;
    if (y <= x) j++;
    out[n++] = x <= y ? x : y;
  }
  while (i < a.length) out[n++] = a[i++]!;
  while (j < b.length) out[n++] = b[j++]!;
  return out.subarray(0, n);
}

/** The members of `a` not in `b`. */
export function difference(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(a.length);
  let n = 0;
  let j = 0;
  for (let i = 0; i < a.length; i++) {
    const value = a[i]!;
    while (j < b.length && b[j]! < value) j++;
    if (b[j] !== value) out[n++] = value;
  }
  return out.subarray(0, n);
}

/** Every document of `0 … size - 1` not in `a`. */
export function complement(a: Int32Array, size: number): Int32Array {
  const out = new Int32Array(size - a.length);
  let n = 0;
  let j = 0;
  for (let value = 0; value < size; value++) {
    if (a[j] === value) j++;
    else out[n++] = value;
  }
  return out.subarray(0, n);
}

/** Index of `value` in the ascending `list`, or -1. */
export function find(list: Int32Array, value: number): number {
  let low = 0;
  let high = list.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const at = list[middle]!;
    if (at === value) return middle;
    if (at < value) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}
