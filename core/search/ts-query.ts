import { sql } from '../../db/pool.ts';

/** The query in the configuration of each locale, OR-ed: a German item is found by German stems. */
export function tsQuery(locales: string[], text: string) {
  return sql.join(
    locales.map((locale) => sql.fragment`websearch_to_tsquery(search_config(${locale}), ${text})`),
    sql.fragment` || `,
  );
}
