import { t } from "elysia";

export const IngestHealthQuery = t.Object({
  hours: t.Optional(
    t.Integer({ minimum: 1, maximum: 2160, default: 48, description: "Hours back to count, 1 to 2160 (90 days)." }),
  ),
});

export const IngestHealthRecord = t.Object({
  flushed_every_seconds: t.Number({
    description: "Each instance writes its counts this often: the latest seconds may not show yet",
  }),
  hours: t.Array(
    t.Object({
      hour: t.Date({ description: "Start of the hour (UTC)" }),
      accepted_events: t.Integer({ description: "Events stored (retries of stored events not counted)" }),
      refused_requests: t.Integer(),
      refused_events: t.Integer({
        description:
          "Events the refused requests carried, where their bodies were read: a batch refused unread while ingest was overloaded (503 ingest_overloaded) counts as a request with none",
      }),
    }),
    { description: "Hours with any ingest, oldest first" },
  ),
  refusals: t.Array(
    t.Object({
      received_at: t.Date(),
      path: t.String(),
      status: t.Integer(),
      code: t.String(),
      detail: t.Nullable(t.String()),
      errors: t.Array(t.Unknown(), { description: "The problem's field errors as they were sent (at most 20)" }),
      events: t.Integer(),
      request_id: t.Nullable(t.String()),
    }),
    { description: "The latest 50 refused ingest requests of the last 7 days, newest first" },
  ),
});
