import type { TProperties } from "@sinclair/typebox";
import { t } from "elysia";
import { SignatureStatus as SignatureStatusSchema } from "../../core/signature-status.ts";
import { Paged, type PageSize, pageQuery } from "../../http/paging.ts";

/** Event pages: 100 by default, at most 1000. URL pages: 20 by default (the interface's limits), at most 200. */
export const eventsPage: PageSize = { defaultLimit: 100, maxLimit: 1000 };
export const urlsPage: PageSize = { defaultLimit: 20, maxLimit: 200 };

const isoTime = (description: string) => t.String({ description });
const uuidPattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

const rangeQuery = {
  org_id: t.Optional(
    t.String({
      pattern: uuidPattern,
      description:
        "The organisation read, for a member's session (optional when the user belongs to one); an API key reads its own.",
    }),
  ),
  since: t.Optional(
    t.String({
      description:
        "ISO 8601 start, inclusive (date-time with zone, or a date meaning 00:00 UTC; years 0001-9999). Default: all time.",
    }),
  ),
  until: t.Optional(t.String({ description: "ISO 8601 end, exclusive. Default: open-ended." })),
};

const ownerQuery = {
  ...rangeQuery,
  domain: t.Optional(
    t.String({
      maxLength: 253,
      description:
        "Narrow to one verified domain of the owner (or a subdomain of one); case, a trailing dot and IDN are normalised.",
    }),
  ),
  delegated_from: t.Optional(
    t.String({
      pattern: uuidPattern,
      description: "Grantor organisation id: read that owner's data through an active delegation (platform keys).",
    }),
  ),
};

const agentQuery = {
  ...rangeQuery,
  agent_id: t.Optional(
    t.String({ minLength: 1, maxLength: 200, description: "Narrow to one agent of the caller's organisation." }),
  ),
};

const IntervalSchema = (options: { default?: string; description?: string } = {}) =>
  t.Union([t.Literal("hour"), t.Literal("day"), t.Literal("week"), t.Literal("month")], options);
export type Interval = "hour" | "day" | "week" | "month";

const timeseriesParams = {
  interval: t.Optional(IntervalSchema({ default: "day", description: "Bucket size (UTC; weeks start on Monday)." })),
};

const SignatureStatus = (description: string) => t.Union(SignatureStatusSchema.anyOf, { description });

/** Narrows event lists and exports to one signature status (signed telemetry, README). */
const signatureFilter = {
  signature_status: t.Optional(
    SignatureStatus(
      "Only events whose request's signature checked out so; `total` then counts them (from the stored events, not the rollups)",
    ),
  ),
};

const exportParams = {
  ...signatureFilter,
  format: t.Optional(
    t.Union([t.Literal("ndjson"), t.Literal("csv")], {
      description: "Overrides the Accept header (application/x-ndjson or text/csv). Default: ndjson.",
    }),
  ),
};

/** Orders URL pages by events (default) or sessions, and narrows them to URLs containing a text. */
const urlPageParams = {
  sort: t.Optional(
    t.Union([t.Literal("events"), t.Literal("sessions")], {
      default: "events",
      description: "Rank by total_events (default) or unique_sessions, descending, then URL (byte order).",
    }),
  ),
  url_contains: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 200,
      description:
        "Only URLs containing this text, ignoring case (a plain substring: % and _ are literal); `total` counts the URLs that match.",
    }),
  ),
};

/** The query parameters of the five reads, on top of a view's own parameters. */
const readQueriesOver = <View extends TProperties>(view: View) => ({
  summary: t.Object(view),
  events: t.Object({ ...view, ...signatureFilter, ...pageQuery(eventsPage) }),
  urls: t.Object({ ...view, ...urlPageParams, ...pageQuery(urlsPage) }),
  timeseries: t.Object({ ...view, ...timeseriesParams }),
  export: t.Object({ ...view, ...exportParams }),
});

/** Owner reads (a content owner's data, or a grantor's) and reporter reads (what an organisation reported). */
export const readQueries = { owner: readQueriesOver(ownerQuery), reporter: readQueriesOver(agentQuery) };

const TypeCount = t.Object({ event_type: t.String(), count: t.Integer() });

/**
 * How fresh a read is: it counts every event whose write was acknowledged before
 * this time (the X-Data-As-Of header says the same, exports included).
 */
const asOf = {
  as_of: t.String({ description: "The read counts every event acknowledged before this time (ISO 8601)." }),
};

export const Summary = t.Object({
  ...asOf,
  organization_id: t.String(),
  domains: t.Array(t.String()),
  total_events: t.Integer(),
  total_sessions: t.Integer(),
  events_by_type: t.Array(TypeCount),
  events_by_source: t.Array(t.Object({ source_role: t.String(), count: t.Integer(), sessions: t.Integer() })),
  agents: t.Array(
    t.Object({
      platform_id: t.String(),
      agent_id: t.Nullable(t.String()),
      event_count: t.Integer(),
      session_count: t.Integer(),
    }),
  ),
  period_start: isoTime("Start of the period (inclusive)"),
  period_end: t.Nullable(isoTime("End of the period (exclusive); null when open-ended")),
});

export const EventItem = t.Object({
  event_id: t.String(),
  session_id: t.Nullable(t.String()),
  event_type: t.String(),
  content_url: t.Nullable(t.String()),
  event_timestamp: t.String(),
  event_data: t.Record(t.String(), t.Unknown()),
  platform_id: t.String(),
  agent_id: t.Nullable(t.String()),
  signature_status: SignatureStatus("What the signature of the request that reported the event checked out as"),
});

export const UrlItem = t.Object({
  content_url: t.String(),
  total_events: t.Integer(),
  unique_sessions: t.Integer(),
  event_types: t.Array(TypeCount),
  last_seen: t.String(),
});

export const EventPage = t.Object({ ...Paged(EventItem).properties, ...asOf });
export const UrlPage = t.Object({ ...Paged(UrlItem).properties, ...asOf });

export const Timeseries = t.Object({
  ...asOf,
  interval: IntervalSchema(),
  period_start: t.String(),
  period_end: t.Nullable(t.String()),
  buckets: t.Array(
    t.Object({
      bucket_start: t.String(),
      total_events: t.Integer(),
      sessions: t.Integer(),
      events_by_type: t.Array(TypeCount),
    }),
  ),
});
