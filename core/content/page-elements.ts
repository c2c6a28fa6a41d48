// The elements on a page, in ordered slots per area. A slot is added at a
// position (the end by default), moved between areas, given settings, removed,
// or the whole layout replaced at once, all or nothing. A page reads with its
// slots and their elements in one query. Any change to the layout is a change
// to the page: its version rises, so If-Match on the page guards both.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId } from '../actor.ts';
import { Problem, conflict, notFound } from '../errors.ts';
import { requireVersion, type IfMatch } from './types.ts';
import { requireOwnChange } from '../media/access.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { elementColumn, elementSchema, type Element } from './elements.ts';
import { findPage, pageColumns, pageSchema, type Page } from './pages.ts';
import { timestamp } from '../timestamp.ts';

export const areaName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,49}$/, 'a lower-case name such as main or sidebar')
  .describe('Where on the page: main, sidebar…');

export const slotSettings = z
  .record(z.string(), z.unknown())
  .describe('Free settings of this placement (width, variant...)');

export const slotSchema = z
  .object({
    element_id: z.uuid(),
    area: z.string(),
    position: z.number().int().describe('In its area, from 0'),
    settings: z.record(z.string(), z.unknown()),
    created_at: timestamp,
  })
  .meta({ id: 'PageSlot' });

export const slotWithElementSchema = slotSchema.extend({ element: elementSchema }).meta({ id: 'PageSlotWithElement' });

export const pageWithElementsSchema = pageSchema
  .extend({ elements: z.array(slotWithElementSchema).describe('By area, then position') })
  .meta({ id: 'PageWithElements' });

export type Slot = z.infer<typeof slotSchema>;

const slotColumns = sql.fragment`pe.element_id, pe.area, pe.position, pe.settings, pe.created_at`;

const elementKeys = Object.keys(elementSchema.shape) as (keyof Element)[];

/** A page row joined with one slot and its element (null without slots), the element's columns prefixed e_. */
const layoutRow = pageSchema.extend({
  slot_element_id: z.uuid().nullable(),
  slot_area: z.string().nullable(),
  slot_position: z.number().nullable(),
  slot_settings: z.record(z.string(), z.unknown()).nullable(),
  slot_created_at: timestamp.nullable(),
  ...Object.fromEntries(elementKeys.map((key) => [`e_${key}`, z.unknown()])),
});

/** The page with its slots and their elements, in one query (a row per slot). */
export async function getPageWithElements(db: CommonQueryMethods, { site }: SiteAccess, id: string) {
  const rows = await db.any(sql.type(layoutRow)`
    select ${pageColumns}, pe.element_id as slot_element_id, pe.area as slot_area, pe.position as slot_position,
      pe.settings as slot_settings, pe.created_at as slot_created_at,
      ${sql.join(
        elementKeys.map((key) => sql.fragment`${elementColumn(key)} as ${sql.identifier([`e_${key}`])}`),
        sql.fragment`, `,
      )}
    from pages p
    left join page_elements pe on pe.page_id = p.id
    left join content_elements e on e.id = pe.element_id
    where p.id = ${id}
    order by pe.area, pe.position`);
  const first = rows[0];
  if (!first || first.site_id !== site.id) throw notFound('No such page.');
  const page = pageSchema.parse(first);
  const elements = rows
    .filter((row) => row.slot_element_id !== null)
    .map((row) => ({
      element_id: row.slot_element_id!,
      area: row.slot_area!,
      position: row.slot_position!,
      settings: row.slot_settings!,
      created_at: row.slot_created_at!,
      element: Object.fromEntries(
        elementKeys.map((key) => [key, (row as Record<string, unknown>)[`e_${key}`]]),
      ) as Element,
    }));
  return { ...page, elements };
}

/** The page, locked, for a change of its layout by this caller. */
async function pageForLayout(db: CommonQueryMethods, access: SiteAccess, pageId: string): Promise<Page> {
  const page = await findPage(db, access.site.id, pageId, true);
  requireOwnChange(access, page.created_by, 'the pages they made');
  return page;
}

const touch = (db: CommonQueryMethods, access: SiteAccess, pageId: string) =>
  db.query(sql.typeAlias('void')`
    update pages set version = version + 1, updated_by = ${actorUserId(access.actor)} where id = ${pageId}`);

/** Elements named in a body, checked to be the site's (422 at each that is not). */
async function requireSiteElements(db: CommonQueryMethods, siteId: string, ids: { path: string; id: string }[]) {
  if (ids.length === 0) return;
  const found = new Set(
    await db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
      select id from content_elements where site_id = ${siteId} and id = any(${sql.array(
        ids.map((entry) => entry.id),
        'uuid',
      )})`),
  );
  const missing = ids.filter((entry) => !found.has(entry.id));
  if (missing.length)
    throw new Problem(422, 'Not an element of the site.', {
      errors: missing.map((entry) => ({ path: entry.path, message: 'is not an element of the site' })),
    });
}

const areaCount = (db: CommonQueryMethods, pageId: string, area: string) =>
  db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from page_elements where page_id = ${pageId} and area = ${area}`);

const shiftArea = (db: CommonQueryMethods, pageId: string, area: string, from: number, by: 1 | -1) =>
  db.query(sql.typeAlias('void')`
    update page_elements set position = position + ${by} where page_id = ${pageId} and area = ${area} and position >= ${from}`);

export type SlotInput = {
  element_id: string;
  area: string;
  position?: number | undefined;
  settings?: Record<string, unknown> | undefined;
};

export async function addSlot(db: CommonQueryMethods, access: SiteAccess, pageId: string, input: SlotInput) {
  return db.transaction(async (tx) => {
    const page = await pageForLayout(tx, access, pageId);
    await requireSiteElements(tx, page.site_id, [{ path: 'body.element_id', id: input.element_id }]);
    const placed = await tx.exists(sql.type(z.object({}))`
      select 1 from page_elements where page_id = ${pageId} and element_id = ${input.element_id}`);
    if (placed) throw conflict('The element is on the page already; PATCH its slot to move it.');
    const count = await areaCount(tx, pageId, input.area);
    const position = Math.min(input.position ?? count, count);
    await shiftArea(tx, pageId, input.area, position, 1);
    const slot = await tx.one(sql.type(slotSchema)`
      insert into page_elements as pe (page_id, element_id, site_id, area, position, settings)
      values (${pageId}, ${input.element_id}, ${page.site_id}, ${input.area}, ${position},
              ${sql.jsonb((input.settings ?? {}) as never)})
      returning ${slotColumns}`);
    await touch(tx, access, pageId);
    return slot;
  });
}

async function findSlot(db: CommonQueryMethods, pageId: string, elementId: string): Promise<Slot> {
  const slot = await db.maybeOne(sql.type(slotSchema)`
    select ${slotColumns} from page_elements pe where pe.page_id = ${pageId} and pe.element_id = ${elementId}`);
  if (!slot) throw notFound('The element is not on the page.');
  return slot;
}

export async function updateSlot(
  db: CommonQueryMethods,
  access: SiteAccess,
  pageId: string,
  elementId: string,
  changes: { area?: string | undefined; position?: number | undefined; settings?: Record<string, unknown> | undefined },
) {
  return db.transaction(async (tx) => {
    await pageForLayout(tx, access, pageId);
    const slot = await findSlot(tx, pageId, elementId);
    const area = changes.area ?? slot.area;
    let position = slot.position;
    if (area !== slot.area || changes.position !== undefined) {
      await shiftArea(tx, pageId, slot.area, slot.position + 1, -1);
      const others = (await areaCount(tx, pageId, area)) - (area === slot.area ? 1 : 0);
      position = Math.min(changes.position ?? others, others);
      await shiftArea(tx, pageId, area, position, 1);
    }
    const updated = await tx.one(sql.type(slotSchema)`
      update page_elements pe set area = ${area}, position = ${position},
        settings = ${sql.jsonb((changes.settings ?? slot.settings) as never)}
      where pe.page_id = ${pageId} and pe.element_id = ${elementId}
      returning ${slotColumns}`);
    await touch(tx, access, pageId);
    return updated;
  });
}

export async function removeSlot(db: CommonQueryMethods, access: SiteAccess, pageId: string, elementId: string) {
  await db.transaction(async (tx) => {
    await pageForLayout(tx, access, pageId);
    const slot = await findSlot(tx, pageId, elementId);
    await tx.query(sql.typeAlias('void')`
      delete from page_elements where page_id = ${pageId} and element_id = ${elementId}`);
    await shiftArea(tx, pageId, slot.area, slot.position + 1, -1);
    await touch(tx, access, pageId);
  });
}

/**
 * The whole layout replaced: the slots listed, in their areas in the order
 * given (or at the positions given), and no others. All or nothing.
 */
export async function replaceLayout(
  db: CommonQueryMethods,
  access: SiteAccess,
  pageId: string,
  slots: SlotInput[],
  ifMatch: IfMatch | undefined,
) {
  return db.transaction(async (tx) => {
    const page = await pageForLayout(tx, access, pageId);
    requireVersion(page.version, ifMatch, 'page');
    const seen = new Set<string>();
    const repeated = slots.flatMap((slot, index) => {
      const again = seen.has(slot.element_id);
      seen.add(slot.element_id);
      return again ? [{ path: `body.elements.${index}.element_id`, message: 'is listed twice' }] : [];
    });
    if (repeated.length) throw new Problem(422, 'An element sits on a page once.', { errors: repeated });
    await requireSiteElements(
      tx,
      page.site_id,
      slots.map((slot, index) => ({ path: `body.elements.${index}.element_id`, id: slot.element_id })),
    );
    // Positions are made 0..n-1 per area, in the order of the given positions, then of the list.
    const byArea = new Map<string, { slot: SlotInput; index: number }[]>();
    slots.forEach((slot, index) => byArea.set(slot.area, [...(byArea.get(slot.area) ?? []), { slot, index }]));
    const rows = [...byArea.values()].flatMap((entries) =>
      entries
        .sort((a, b) => (a.slot.position ?? a.index) - (b.slot.position ?? b.index) || a.index - b.index)
        .map(({ slot }, position) => ({ ...slot, position })),
    );
    await tx.query(sql.typeAlias('void')`delete from page_elements where page_id = ${pageId}`);
    if (rows.length)
      await tx.query(sql.typeAlias('void')`
        insert into page_elements (page_id, element_id, site_id, area, position, settings)
        select ${pageId}, slot.element_id, ${page.site_id}, slot.area, slot.position, slot.settings
        from jsonb_to_recordset(${sql.jsonb(rows.map((row) => ({ ...row, settings: row.settings ?? {} })) as never)})
          as slot (element_id uuid, area text, position int, settings jsonb)`);
    await touch(tx, access, pageId);
    return getPageWithElements(tx, access, pageId);
  });
}
