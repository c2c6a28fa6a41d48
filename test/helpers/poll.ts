// Waiting for something another process or connection does in its own time
// (a cancel reaching the server, a backend leaving, a mail being sent): read
// until the answer is the one expected, then let the test assert on it.

/** Reads until `done` holds or the tries run out, and answers the last value read. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  { tries = 50, everyMs = 20 }: { tries?: number; everyMs?: number } = {},
): Promise<T> {
  let value = await read();
  for (let i = 1; i < tries && !done(value); i++) {
    await new Promise((resolve) => setTimeout(resolve, everyMs));
    value = await read();
  }
  return value;
}
