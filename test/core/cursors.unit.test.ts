// Page cursors: the cursor a page hands out leads back to the row after its
// last one, and a cursor a client made up is a 400, never a query that fails
// (a 500) or reads from somewhere else.
import { after, before, toPage, type PageQuery } from '../../core/pagination.ts';
import { Problem } from '../../core/errors.ts';
import { afterSorted, sortedCursor, type SortKey } from '../../core/sorting.ts';

const rows = [
  { created_at: '2026-01-02T03:04:05.678901Z', id: '00000000-0000-4000-8000-000000000001' },
  { created_at: '2026-01-02T03:04:05.678901Z', id: '00000000-0000-4000-8000-000000000002' },
  { created_at: '2026-01-03T00:00:00Z', id: '00000000-0000-4000-8000-000000000003' },
];
const query = (extra: Partial<PageQuery> = {}): PageQuery => ({ limit: 2, ...extra });
const encoded = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function problemOf(run: () => unknown): Problem | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof Problem) return error;
    throw error;
  }
  return undefined;
}

describe('created_at pages', () => {
  it('hand out a cursor after the last row kept, and none on the last page', async () => {
    const page = await toPage(rows, query());
    expect(page.items).toEqual(rows.slice(0, 2));
    expect(page.next_cursor).not.toBeNull();
    expect((await toPage(rows.slice(0, 2), query())).next_cursor).toBeNull();
  });

  it('read the cursor back as the last row kept, after it or before it', async () => {
    const cursor = (await toPage(rows, query())).next_cursor!;
    expect(after(query({ cursor }), 'posts').values).toEqual([rows[1]!.created_at, rows[1]!.id]);
    expect(after(query({ cursor }), 'posts').sql).toContain('>');
    expect(before(query({ cursor }), 'posts').sql).toContain('<');
  });

  it('count only when asked for the total', async () => {
    const count = async () => 3;
    expect(await toPage(rows, query({ include_total: true }), count)).toMatchObject({ total: 3 });
    expect(await toPage(rows, query(), count)).not.toHaveProperty('total');
  });

  it('start from the first row without a cursor', () => {
    expect(after(query(), 'posts').sql).toBe('true');
  });

  it.each([
    ['not base64 JSON', 'not-a-cursor'],
    ['a date PostgreSQL cannot read', encoded(['yesterday', rows[0]!.id])],
    ['an id that is not a uuid', encoded([rows[0]!.created_at, "1' or '1'='1"])],
    ['a row of three', encoded([rows[0]!.created_at, rows[0]!.id, 'more'])],
  ])('refuse a cursor made up by hand (%s) as a 400', (_case, cursor) => {
    expect(problemOf(() => after(query({ cursor }), 'posts'))?.status).toBe(400);
  });
});

describe('sorted pages', () => {
  const byName: SortKey = { column: 'name', cast: 'text' };
  const bySize: SortKey = { column: 'size', cast: 'int8' };
  const byDate: SortKey = { column: 'published_at', cast: 'timestamptz' };

  it('keep the sort value of the last row, as text, with its id', () => {
    const cursor = sortedCursor({ id: rows[0]!.id, size: 42 }, bySize);
    expect(afterSorted(cursor, 'media', bySize, false).values).toEqual(['42', '42', rows[0]!.id]);
  });

  it('keep a missing value as null, which sorts first ascending', () => {
    const cursor = sortedCursor({ id: rows[0]!.id, name: null }, byName);
    expect(afterSorted(cursor, 'media', byName, false).sql).toContain('is null');
  });

  it.each([
    ['a count past int8', encoded(['9223372036854775808', rows[0]!.id]), bySize],
    ['a count that is no number', encoded(['many', rows[0]!.id]), bySize],
    ['an empty date', encoded(['', rows[0]!.id]), byDate],
  ])('refuse a value its column cannot take (%s) as a 400', (_case, cursor, sort) => {
    expect(problemOf(() => afterSorted(cursor, 'media', sort, false))?.status).toBe(400);
  });
});
