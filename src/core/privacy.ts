/** Privacy levels of a session or turn (standard 5.5): how much of the conversation a recipient sees. */
export const privacyLevels = ["full", "summary", "intent", "minimal"] as const;
export type PrivacyLevel = (typeof privacyLevels)[number];

const strictness: Record<PrivacyLevel, number> = { full: 0, summary: 1, intent: 2, minimal: 3 };

const countsAndUrls = ["query_tokens", "response_tokens", "content_urls_retrieved", "content_urls_cited"];
const intentFields = [
  ...countsAndUrls,
  "query_intent",
  "response_type",
  "response_mode",
  "topics",
  "model_id",
  "ad_rendered",
];
const allFields = [...intentFields, "query_text", "response_text"];

/** Turn fields each privacy level allows (standard 5.5); anything else is stripped. */
const allowedFields: Record<PrivacyLevel, readonly string[]> = {
  full: allFields,
  summary: allFields,
  intent: intentFields,
  minimal: countsAndUrls,
};

/** A declared level; missing or unknown is `minimal` (fail closed). */
export function privacyLevelOf(value: unknown): PrivacyLevel {
  return (privacyLevels as readonly unknown[]).includes(value) ? (value as PrivacyLevel) : "minimal";
}

/** The stricter of two levels. */
export function stricterLevel(a: PrivacyLevel, b: PrivacyLevel): PrivacyLevel {
  return strictness[a] >= strictness[b] ? a : b;
}

/**
 * The turn as stored: only the fields its effective level allows, plus that level,
 * and the known fields that were stripped (section 5.5: strip, never refuse).
 * The effective level is the stricter of the turn's own and its session's, when
 * the session declared one (null: it declared none, and the turn's own governs).
 * Unknown fields are tolerated and not stored, so they are not reported.
 */
export function stripTurn(
  turn: Record<string, unknown>,
  sessionLevel: PrivacyLevel | null,
): { turn: Record<string, unknown>; level: PrivacyLevel; removed: string[] } {
  const own = privacyLevelOf(turn.privacy_level);
  const level = sessionLevel ? stricterLevel(own, sessionLevel) : own;
  const kept: Record<string, unknown> = { privacy_level: level };
  for (const field of allowedFields[level]) {
    if (turn[field] !== undefined) kept[field] = turn[field];
  }
  const removed = Object.keys(turn).filter(
    (field) => allFields.includes(field) && turn[field] != null && kept[field] === undefined,
  );
  return { turn: kept, level, removed };
}

/**
 * An event's `data` as a click manifest shows it at the session's level: the
 * conversation-derived fields (the turn fields of standard 5.4) above that level
 * are withheld, every other key is kept. `intent` withholds the raw query and
 * response text; `minimal` keeps only token counts and the content URL arrays.
 */
export function withholdConversationFields(
  data: Record<string, unknown>,
  level: PrivacyLevel,
): Record<string, unknown> {
  const allowed = allowedFields[level];
  return Object.fromEntries(Object.entries(data).filter(([key]) => !allFields.includes(key) || allowed.includes(key)));
}

/** Whether `data` holds any conversation-derived field (a turn field of standard 5.4 sent as an event's data key). */
export function holdsConversationFields(data: Record<string, unknown>): boolean {
  for (const key in data) if (allFields.includes(key)) return true;
  return false;
}

/**
 * An event's `data` as stored at `level`: conversation-derived keys above it are
 * stripped as a turn's are (section 5.5: strip, never refuse), every other key is
 * kept; with the keys stripped, to report.
 */
export function stripConversationData(
  data: Record<string, unknown>,
  level: PrivacyLevel,
): { data: Record<string, unknown>; removed: string[] } {
  const kept = withholdConversationFields(data, level);
  return { data: kept, removed: Object.keys(data).filter((key) => !(key in kept) && data[key] != null) };
}

/** The conversation-derived fields `level` withholds (none at `full` and `summary`). */
export function withheldFields(level: PrivacyLevel): string[] {
  return allFields.filter((field) => !allowedFields[level].includes(field));
}
