import { type TSchema, t } from "elysia";

/**
 * The one paging mechanism of every list: `limit` and `offset` query parameters
 * bounded by the schema (400 naming the parameter past a bound), and the answer
 * `{items, total, limit, offset}`.
 */
export interface PageSize {
  defaultLimit: number;
  maxLimit: number;
}

/** Control-plane lists (keys, domains, members, …). */
export const controlPlanePage: PageSize = { defaultLimit: 50, maxLimit: 100 };

/**
 * Largest offset: every integer up to here is exact in JavaScript and fits PostgreSQL's
 * bigint OFFSET; past it the value would reach the database as an out-of-range 500.
 */
export const maxPageOffset = Number.MAX_SAFE_INTEGER;

/** The `limit` and `offset` query parameters of a list with this page size. */
export const pageQuery = (size: PageSize = controlPlanePage) => ({
  limit: t.Optional(
    t.Integer({
      minimum: 1,
      maximum: size.maxLimit,
      default: size.defaultLimit,
      description: `Page size, 1 to ${size.maxLimit} (default ${size.defaultLimit}).`,
    }),
  ),
  offset: t.Optional(
    t.Integer({ minimum: 0, maximum: maxPageOffset, default: 0, description: "Items to skip, 0 to 2^53 - 1." }),
  ),
});

export const Paged = <T extends TSchema>(item: T) =>
  t.Object({ items: t.Array(item), total: t.Integer(), limit: t.Integer(), offset: t.Integer() });

/**
 * A list's answer: what `read` finds on the page the query asks for (its items
 * and their total), then that page's limit and offset.
 */
export async function answerPage<Found extends { items: unknown[]; total: number }>(
  query: { limit?: number; offset?: number },
  read: (page: { limit: number; offset: number }) => Promise<Found>,
): Promise<Found & { limit: number; offset: number }> {
  const page = pageOf(query);
  return { ...(await read(page)), ...page };
}

export function pageOf(
  query: { limit?: number; offset?: number },
  size: PageSize = controlPlanePage,
): { limit: number; offset: number } {
  return { limit: query.limit ?? size.defaultLimit, offset: query.offset ?? 0 };
}
