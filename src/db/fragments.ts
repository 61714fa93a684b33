import type { Fragment, Queryable } from "./sql.ts";

/** Query fragments one after another with `separator` between them (`, ` by default). */
export function joined(sql: Queryable, parts: readonly Fragment[], separator: Fragment = sql`, `): Fragment {
  if (parts.length === 0) throw new Error("joined() needs at least one fragment");
  return parts.slice(1).reduce((all, part) => sql`${all}${separator}${part}`, parts[0] as Fragment);
}

/**
 * Escaped column names separated by commas. (postgres.js turns `${sql(list)}` into
 * identifiers or values depending on the words before it; one name at a time is
 * always an identifier.)
 */
export const identifiers = (sql: Queryable, names: readonly string[]): Fragment =>
  joined(
    sql,
    names.map((name) => sql`${sql(name)}`),
  );
