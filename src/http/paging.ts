import { type TSchema, t } from "elysia";

/** Largest page any control-plane list returns. */
export const maxPageSize = 100;

/**
 * Largest offset: every integer up to here is exact in JavaScript and fits PostgreSQL's
 * bigint OFFSET; past it the value would reach the database as an out-of-range 500.
 */
export const maxPageOffset = Number.MAX_SAFE_INTEGER;

export const PageQuery = {
  limit: t.Optional(t.Integer({ minimum: 1, maximum: maxPageSize, default: 50, description: `1–${maxPageSize}` })),
  offset: t.Optional(t.Integer({ minimum: 0, maximum: maxPageOffset, default: 0 })),
};

export const Paged = <T extends TSchema>(item: T) =>
  t.Object({ items: t.Array(item), total: t.Integer(), limit: t.Integer(), offset: t.Integer() });

export function pageOf(query: { limit?: number; offset?: number }): { limit: number; offset: number } {
  return { limit: query.limit ?? 50, offset: query.offset ?? 0 };
}
