/**
 * Content Telemetry traffic for the ingest benchmark, in two shapes:
 *
 * - `worst`: nearly every event on a URL of its own, sessions of 1000 events sent
 *   in ten consecutive batches (the shape the session counting costs most on);
 * - `realistic`: four content owners with 10,000 URLs each (over a few
 *   subdomains), drawn Zipf-like (a few pages get most reads), sessions of 5 to 50
 *   events over one or two owners, several sessions per batch.
 *
 * The mix of types: mostly retrievals, groundings, citations and presentations,
 * some engagements and completed turns; timestamps within the last hour.
 */

export interface GeneratedEvent {
  id: string;
  type: string;
  timestamp: string;
  source_role: string;
  session_id: string;
  content_url?: string;
  turn_id?: string;
  output_id?: string;
  presentation_id?: string;
  data: Record<string, unknown>;
  turn?: Record<string, unknown>;
}

export type ShapeName = "worst" | "realistic";

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;

function event(sessionId: string, turnId: string, url: () => string): GeneratedEvent {
  const base = {
    id: crypto.randomUUID(),
    session_id: sessionId,
    timestamp: new Date(Date.now() - Math.floor(Math.random() * 3_600_000)).toISOString(),
    source_role: "agent",
  };
  const roll = Math.random();
  if (roll < 0.35)
    return { ...base, type: "content_retrieved", content_url: url(), data: { user_agent: "AssistantBot/2.1" } };
  if (roll < 0.6)
    return { ...base, type: "content_grounded", content_url: url(), data: { scope: "turn", cached: roll < 0.4 } };
  if (roll < 0.78) {
    return {
      ...base,
      type: "content_cited",
      content_url: url(),
      turn_id: turnId,
      output_id: `out-${turnId}`,
      data: { citation_type: pick(["direct_quote", "paraphrase", "reference"]), position: "supporting" },
    };
  }
  if (roll < 0.92) {
    return {
      ...base,
      type: "content_presented",
      content_url: url(),
      turn_id: turnId,
      output_id: `out-${turnId}`,
      data: { presentation_kind: "source_reference", presentation_type: pick(["link", "card", "snippet"]) },
    };
  }
  if (roll < 0.96) {
    return {
      ...base,
      type: "content_engaged",
      content_url: url(),
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

/** Ranks 0..n-1 with P(k) proportional to 1/(k+1): the few most popular pages get most reads. */
function zipf(n: number): () => number {
  const cumulative = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) {
    sum += 1 / (k + 1);
    cumulative[k] = sum;
  }
  return () => {
    const target = Math.random() * sum;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((cumulative[mid] as number) < target) low = mid + 1;
      else high = mid;
    }
    return low;
  };
}

const worstHosts = Array.from({ length: 40 }, (_, i) => `publisher-${i}.example.com`);
const owners = Array.from({ length: 4 }, (_, i) => `owner-${i}.example.com`);
const ownerHosts = owners.map((owner) => [owner, `www.${owner}`, `news.${owner}`, `blog.${owner}`]);
const pageRank = zipf(10_000);

/**
 * One emitter's stream of events in batches of `batchSize`. Each call gives the
 * next batch; sessions continue across calls the way an emitter sends them.
 */
export function emitter(shape: ShapeName, batchSize: number): () => GeneratedEvent[] {
  if (shape === "worst") {
    let sessionId = crypto.randomUUID();
    let batches = 0;
    return () => {
      if (batches++ % 10 === 0) sessionId = crypto.randomUUID();
      const turnId = `turn-${crypto.randomUUID().slice(0, 8)}`;
      const url = () => `https://${pick(worstHosts)}/articles/${crypto.randomUUID()}`;
      return Array.from({ length: batchSize }, () => event(sessionId, turnId, url));
    };
  }
  let session = { id: crypto.randomUUID(), left: 0, turn: "", owners: [] as number[] };
  return () =>
    Array.from({ length: batchSize }, () => {
      if (session.left === 0) {
        const first = Math.floor(Math.random() * owners.length);
        const touched = Math.random() < 0.3 ? [first, (first + 1) % owners.length] : [first];
        session = { id: crypto.randomUUID(), left: 5 + Math.floor(Math.random() * 46), turn: "", owners: touched };
      }
      session.left--;
      if (session.turn === "" || Math.random() < 0.2) session.turn = `turn-${crypto.randomUUID().slice(0, 8)}`;
      const hosts = ownerHosts[pick(session.owners)] as string[];
      return event(session.id, session.turn, () => `https://${pick(hosts)}/articles/${pageRank()}`);
    });
}
