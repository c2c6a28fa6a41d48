// What the four translatable kinds (elements, media, pages, posts) share: a
// master and its translations, one per locale, seen through a small adapter
// per kind, so that reading staleness, syncing and translating are written
// once (./overview.ts, ./sync.ts, ./plan.ts, ./translate.ts).
import type { CommonQueryMethods } from '../../db/pool.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';

export const translationKinds = ['elements', 'media', 'pages', 'posts'] as const;
export type TranslationKind = (typeof translationKinds)[number];

/**
 * How a localized field is translated: `plain` text, `html` (tags kept,
 * text translated), `markdown` (syntax kept), `slug` (its words translated,
 * then made a slug again), or `value` (not text: a machine translation copies
 * it, as a copy does).
 */
export type FieldFormat = 'plain' | 'html' | 'markdown' | 'slug' | 'value';

export type LocalizedField = {
  name: string;
  format: FieldFormat;
  /** A new translation cannot exist without it (a page's title): copied from the master when not translated. */
  required?: boolean;
};

export const takenSources = ['machine', 'copy', 'person'] as const;
export type TakenSource = (typeof takenSources)[number];

/** What a translation recorded for one field when it last took it from its master (db/migrations/0025). */
export type Taken = { hash: string; source: TakenSource; taken_at: string };

/** One item of a group, as the generic flow sees it; `item` is the kind's own row, for its writes. */
export type Member<Item> = {
  id: string;
  locale: string;
  /** The kind's status (draft, published...); null where it has none (media translations). */
  status: string | null;
  updated_at: string;
  /** The localized fields' values, and their hashes, as the database computes them. */
  values: Record<string, unknown>;
  hashes: Record<string, string>;
  /** For translations: what each field last took from the master. */
  taken: Record<string, Taken>;
  item: Item;
};

export type Group<Item> = { master: Member<Item>; translations: Member<Item>[] };

/**
 * A kind, for the generic flow. Access rules mirror the kind's own PATCH:
 * `requireChange` refuses an author what they did not make.
 */
export type TranslationAdapter<Item = unknown> = {
  kind: TranslationKind;
  /** "element", for messages. */
  noun: string;
  /** The group of the item `id` names, a master or a translation; 404 when it is not one of the site's. */
  group(db: CommonQueryMethods, site: Site, id: string): Promise<Group<Item>>;
  localizedFields(group: Group<Item>): LocalizedField[];
  /** Non-localized fields each translation holds a copy of: what a sync copies. */
  syncedValues(item: Item): Record<string, unknown>;
  /** Non-localized fields translations read from their master as they are served: nothing to copy. */
  inheritedFields(group: Group<Item>): string[];
  requireChange(access: SiteAccess, member: Member<Item>): void;
  /** Writes `values` (by localized field) into the translation in `locale`, creating it when absent; its id. */
  write(
    db: CommonQueryMethods,
    access: SiteAccess,
    group: Group<Item>,
    locale: string,
    values: Record<string, unknown>,
  ): Promise<string>;
  /** Gives the translation the master's synced values (`syncedValues` of the master). */
  applySync(
    db: CommonQueryMethods,
    access: SiteAccess,
    translation: Member<Item>,
    values: Record<string, unknown>,
  ): Promise<void>;
};

export type AnyAdapter = TranslationAdapter<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A value a field does not really have: a translation of it means nothing. */
export const isEmptyValue = (value: unknown) =>
  value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);

/** A value given as text, else none. */
export const textOf = (value: unknown) => (typeof value === 'string' ? value : undefined);
