// A literal substring search for ILIKE: %, _ and the escape character \ lose
// their LIKE meaning, so a user's text matches only itself.
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, '\\$&')}%`;
