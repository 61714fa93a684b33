import { t } from "elysia";
import { ingestLimits } from "../../core/ingest-limits.ts";

export const ClickTokenRequest = t.Object(
  {
    session_id: t.String({ format: "uuid", description: "a session of the caller's organisation" }),
    content_url: t.String({
      minLength: 1,
      maxLength: ingestLimits.maxUrlLength,
      description: "http(s) URL the outbound link points at",
    }),
  },
  { additionalProperties: true },
);

export const ClickToken = t.Object({
  token: t.String({ description: "ctx_ + 43 url-safe characters; shown once, only its hash is stored" }),
  session_id: t.String({ format: "uuid" }),
  content_url: t.String(),
  expires_at: t.Date({ description: "90 days after issue" }),
});

export const ClickTokenParams = t.Object({
  token: t.String({
    minLength: 1,
    maxLength: 300,
    description: "a click token of this service: ctx_ + 43 url-safe characters",
  }),
});

const ManifestEventType = t.Union([
  t.Literal("content_grounded"),
  t.Literal("content_cited"),
  t.Literal("content_presented"),
]);

export const ClickManifest = t.Object({
  started_at: t.Date({ description: "start of the session the token stands for (its id is never shown)" }),
  click_content_url: t.String({ description: "the content_url the token was issued for" }),
  events: t.Array(
    t.Object({
      type: ManifestEventType,
      timestamp: t.Date(),
      turn_id: t.Optional(t.String()),
      output_id: t.Optional(t.String()),
      content_url: t.String({ description: "visible at every privacy level" }),
      data: t.Record(t.String(), t.Unknown(), {
        description:
          "the event's data; conversation-derived fields above the session's privacy level are withheld (intent: no raw query or response text; minimal: only token counts and content URL arrays)",
      }),
    }),
    { description: "grounded, cited and presented events on content of visible owners, oldest first (at most 1,000)" },
  ),
  content_urls_grounded: t.Array(t.String()),
  content_urls_cited: t.Array(t.String()),
  content_urls_presented: t.Array(t.String()),
  truncated: t.Boolean({ description: "API extension: true when the session has more than 1,000 such events" }),
});

export const LookupCount = t.Object({
  day: t.String({ format: "date", description: "UTC day" }),
  role: t.Union([t.Literal("issuer"), t.Literal("resolver"), t.Literal("owner")], {
    description: "issuer: your tokens were resolved; resolver: you resolved tokens; owner: your content was shown",
  }),
  lookups: t.Integer(),
});
