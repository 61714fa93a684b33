import type { Queryable } from "../../db/sql.ts";
import type { EventRow } from "./event-columns.ts";

/** An engagement reported with a click token, naming the presentation it acted on. */
export interface ClickedPresentation {
  tokenHash: Uint8Array;
  presentationId: string;
  /** The engagement's row: one a retry leaves out (stored already) records nothing. */
  row: EventRow;
}

/**
 * Records, in the write that stores them, the presentations engagements carrying
 * click tokens named: a token's first, and whether another followed (standard
 * 7.4.1: a token seen on two presentations is never resolved, click-tokens/manifest.ts).
 * Undefined when there are none.
 */
export function recordClickedPresentations(sql: Queryable, clicks: readonly ClickedPresentation[]) {
  if (clicks.length === 0) return undefined;
  const byToken = new Map<string, Set<string>>();
  for (const click of clicks) {
    const hex = Buffer.from(click.tokenHash).toString("hex");
    const seen = byToken.get(hex) ?? byToken.set(hex, new Set()).get(hex);
    seen?.add(click.presentationId.toLowerCase());
  }
  // In token order, so that writes recording the same tokens lock them in one order.
  const tokens = [...byToken]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([hex, presentations]) => ({ hex, presentations: [...presentations] }));
  return sql`
    UPDATE click_tokens t SET
      presentation_id = coalesce(t.presentation_id, p.presentation_id),
      presentations_differ = t.presentations_differ OR p.several
        OR coalesce(t.presentation_id <> p.presentation_id, false)
    FROM unnest(
      ${tokens.map((token) => token.hex)}::text[],
      ${tokens.map((token) => token.presentations[0] as string)}::uuid[],
      -- postgres.js cannot send a boolean array; text casts exactly.
      ${tokens.map((token) => (token.presentations.length > 1 ? "t" : "f"))}::text[]::boolean[]
    ) AS p (hash, presentation_id, several)
    WHERE t.token_hash = decode(p.hash, 'hex')`.execute();
}
