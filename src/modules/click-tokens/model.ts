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
