import { type CallResult, call } from "./http.ts";

/** A timestamp `secondsAgo` before now, ISO 8601. */
export function ago(secondsAgo = 60): string {
  return new Date(Date.now() - secondsAgo * 1000).toISOString();
}

const url = (domain: string, path = "/article") => `https://${domain}${path}`;

/**
 * One valid v1 event of each type, for a session-bound agent report on `domain`.
 * Override any field; pass `undefined` to drop one.
 */
export const validEvents = {
  /** A retrieval seen at the edge, which may be reported without a session (an agent's retrieval carries one). */
  retrieved: (domain: string, extra: Record<string, unknown> = {}) => ({
    id: crypto.randomUUID(),
    type: "content_retrieved",
    timestamp: ago(),
    source_role: "edge",
    content_url: url(domain),
    data: { user_agent: "TestBot/1.0" },
    ...extra,
  }),
  grounded: (domain: string, extra: Record<string, unknown> = {}) => ({
    id: crypto.randomUUID(),
    type: "content_grounded",
    timestamp: ago(),
    content_url: url(domain),
    data: { scope: "turn", cached: false },
    ...extra,
  }),
  cited: (domain: string, extra: Record<string, unknown> = {}) => ({
    id: crypto.randomUUID(),
    type: "content_cited",
    timestamp: ago(),
    content_url: url(domain),
    turn_id: "turn-1",
    output_id: "out-1",
    data: { citation_type: "direct_quote", position: "primary" },
    ...extra,
  }),
  presented: (domain: string, extra: Record<string, unknown> = {}) => ({
    id: crypto.randomUUID(),
    type: "content_presented",
    timestamp: ago(),
    content_url: url(domain),
    turn_id: "turn-1",
    output_id: "out-1",
    data: { presentation_kind: "content", presentation_type: "card" },
    ...extra,
  }),
  engaged: (domain: string, extra: Record<string, unknown> = {}) => ({
    id: crypto.randomUUID(),
    type: "content_engaged",
    timestamp: ago(),
    content_url: url(domain),
    presentation_id: crypto.randomUUID(),
    data: { engagement_type: "link_click" },
    ...extra,
  }),
  turnStarted: (extra: Record<string, unknown> = {}) => ({
    id: crypto.randomUUID(),
    type: "turn_started",
    timestamp: ago(),
    turn_id: "turn-1",
    ...extra,
  }),
  checkout: (extra: Record<string, unknown> = {}) => ({
    id: crypto.randomUUID(),
    type: "checkout_completed",
    timestamp: ago(),
    source_role: "index",
    data: { value_amount: 4999, currency: "USD" },
    ...extra,
  }),
};

/** An event_batch envelope. */
export function batch(events: unknown[], extra: Record<string, unknown> = {}) {
  return { document_type: "event_batch", schema_version: "1.0", events, ...extra };
}

/** Posts event batches of one session with `key`, the way an emitter sends a session's events. */
export const sessionPoster =
  (key: string, sessionId: string) =>
  (events: unknown[]): Promise<CallResult> =>
    call("POST", "/events", { key, body: batch(events, { session_id: sessionId }) });
