/**
 * Realistic Content Telemetry traffic for the ingest benchmark: an agent's
 * sessions over a few dozen publisher hosts, mostly retrievals, groundings,
 * citations and presentations, some engagements and turns.
 */
const hosts = Array.from({ length: 40 }, (_, i) => `publisher-${i}.example.com`);
const sections = ["news", "guides", "reviews", "docs", "blog"];

export interface GeneratedEvent {
  id: string;
  type: string;
  timestamp: string;
  source_role: string;
  content_url?: string;
  turn_id?: string;
  output_id?: string;
  presentation_id?: string;
  data: Record<string, unknown>;
  turn?: Record<string, unknown>;
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;

function contentUrl(): string {
  return `https://${pick(hosts)}/${pick(sections)}/${Math.floor(Math.random() * 5000)}-article-about-something`;
}

/** One event; timestamps spread over the last hour. */
export function generateEvent(turnId: string): GeneratedEvent {
  const base = {
    id: crypto.randomUUID(),
    timestamp: new Date(Date.now() - Math.floor(Math.random() * 3_600_000)).toISOString(),
    source_role: "agent",
  };
  const roll = Math.random();
  if (roll < 0.35) {
    return { ...base, type: "content_retrieved", content_url: contentUrl(), data: { user_agent: "AssistantBot/2.1" } };
  }
  if (roll < 0.6) {
    return {
      ...base,
      type: "content_grounded",
      content_url: contentUrl(),
      data: { scope: "turn", cached: roll < 0.4 },
    };
  }
  if (roll < 0.78) {
    return {
      ...base,
      type: "content_cited",
      content_url: contentUrl(),
      turn_id: turnId,
      output_id: `out-${turnId}`,
      data: { citation_type: pick(["direct_quote", "paraphrase", "reference"]), position: "supporting" },
    };
  }
  if (roll < 0.92) {
    return {
      ...base,
      type: "content_presented",
      content_url: contentUrl(),
      turn_id: turnId,
      output_id: `out-${turnId}`,
      data: { presentation_kind: "source_reference", presentation_type: pick(["link", "card", "snippet"]) },
    };
  }
  if (roll < 0.96) {
    return {
      ...base,
      type: "content_engaged",
      content_url: contentUrl(),
      presentation_id: crypto.randomUUID(),
      data: { engagement_type: "link_click" },
    };
  }
  return {
    ...base,
    type: "turn_completed",
    turn_id: turnId,
    data: {},
    turn: { privacy_level: "intent", query_intent: "how_to", query_tokens: 40, response_tokens: 600 },
  };
}

export function generateBatch(size: number): GeneratedEvent[] {
  const turnId = `turn-${crypto.randomUUID().slice(0, 8)}`;
  return Array.from({ length: size }, () => generateEvent(turnId));
}
