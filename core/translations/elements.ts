// Elements as translations see them: the localized fields are those the
// type marks `localized` (text and rich text translated, other types copied);
// a translation holds only those (core/content/data.ts refuses the others), and
// public reads take every other field from the master as they serve it. So a
// sync has nothing to copy into an element: it reports those fields as
// inherited, and the staleness of the localized ones.
import { createElement, updateElement } from '../content/element-writes.ts';
import { elementColumns, elementSchema, type Element } from '../content/elements.ts';
import type { FieldType } from '../content/fields.ts';
import { findType, type ContentType } from '../content/types.ts';
import { requireOwnChange } from '../media/access.ts';
import { tableGroup } from './group.ts';
import type { FieldFormat, Member, TranslationAdapter } from './model.ts';

type ElementItem = Element & { type: ContentType };

const formats: Partial<Record<FieldType, FieldFormat>> = {
  text: 'plain',
  long_text: 'plain',
  rich_text: 'html',
  slug: 'slug',
};

export const elementsAdapter: TranslationAdapter<ElementItem> = {
  kind: 'elements',
  noun: 'element',
  async group(db, site, id) {
    const group = await tableGroup(
      db,
      {
        kind: 'elements',
        table: 'content_elements',
        noun: 'element',
        schema: elementSchema,
        columns: elementColumns,
        alias: 'e',
      },
      site.id,
      id,
    );
    const type = await findType(db, site.id, group.master.item.type_id);
    const typed = (member: Member<Element>) => ({ ...member, item: { ...member.item, type } });
    return { master: typed(group.master), translations: group.translations.map(typed) };
  },
  localizedFields: ({ master }) =>
    master.item.type.fields
      .filter((field) => field.localized)
      .map((field) => ({ name: field.id, format: formats[field.type] ?? 'value' })),
  syncedValues: () => ({}),
  inheritedFields: ({ master }) => master.item.type.fields.filter((field) => !field.localized).map((field) => field.id),
  requireChange: (access, member) => requireOwnChange(access, member.item.created_by, 'the elements they made'),
  async write(db, access, { master, translations }, locale, values) {
    const existing = translations.find((translation) => translation.locale === locale);
    if (existing) return (await updateElement(db, access, existing.id, { data: values })).id;
    const created = await createElement(db, access, {
      master_id: master.id,
      locale,
      name: master.item.name,
      data: values,
      status: 'draft',
    });
    return created.id;
  },
  async applySync() {
    // Nothing stored to copy: see the top of this file.
  },
};
